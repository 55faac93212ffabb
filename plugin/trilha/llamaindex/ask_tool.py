"""``trilha_ask``: a short cited answer (UC09, as ``trilha ask`` and ``POST /v1/query``) as a
LlamaIndex ``FunctionTool``.

The principal is bound when the tool is made; the model chooses the question and how many
candidates are read. The tool's text is the answer with its numbered citations; its raw output
is the :class:`~trilha.answer.Answer`.
"""

from __future__ import annotations

from llama_index.core.tools import FunctionTool
from pydantic import Field

from trilha.access.principal import Principal
from trilha.answer import Answer, aask, ask
from trilha.llamaindex.tool_args import ToolArgs, schema_tool
from trilha.types import MAX_QUESTION_CHARS
from trilha.workspace import Workspace

#: The tool's name.
ASK_TOOL_NAME = "trilha_ask"
_DESCRIPTION = (
    "A short answer to a question from the company's documents: at most 8 lines, every "
    "sentence citing the passage it rests on ([n] doc_id, unit_id); or why there is none."
)


class AskArgs(ToolArgs):
    """What the model chooses in a ``trilha_ask`` call."""

    question: str = Field(
        min_length=1, max_length=MAX_QUESTION_CHARS, description="The question, in its words."
    )
    top_n: int = Field(12, ge=1, le=50, description="Passages the answer may draw on.")


def answer_text(answer: Answer) -> str:
    """The answer, then each citation as ``[n] doc_id, unit_id: snippet``."""
    if answer.no_answer is not None:
        return f"No answer: {answer.no_answer.reason}"
    lines = [answer.answer, ""]
    lines += [f"[{c.number}] {c.doc_id}, {c.unit_id}: {c.snippet}" for c in answer.citations]
    return "\n".join(lines)


def ask_tool(workspace: Workspace, principal: Principal | None = None) -> FunctionTool:
    """A ``trilha_ask`` tool over ``workspace`` answering as ``principal`` (anonymous when
    None)."""
    who = principal or Principal.anonymous()

    def run(args: AskArgs) -> Answer:
        return ask(workspace, args.question, top_n=args.top_n, principal=who)

    async def arun(args: AskArgs) -> Answer:
        return await aask(workspace, args.question, top_n=args.top_n, principal=who)

    return schema_tool(ASK_TOOL_NAME, _DESCRIPTION, AskArgs, run, arun, text=answer_text)
