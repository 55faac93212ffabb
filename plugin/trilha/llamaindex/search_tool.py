"""``trilha_search``: hybrid search as a LlamaIndex ``FunctionTool`` for agents.

The principal and the fixed request fields are bound when the tool is made (an agent cannot
widen what it may see by choosing arguments); the LLM chooses the query, how many results and
the document filters. The tool's text (``ToolOutput.content``) lists each passage with its
citation; its raw output is the :class:`~trilha.types.SearchResult` with every score and the
trace.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.tools import FunctionTool
from pydantic import Field

from trilha.access.principal import Principal
from trilha.llamaindex.tool_args import ToolArgs, schema_tool
from trilha.request import SearchRequest
from trilha.types import SearchResult
from trilha.workspace import Workspace

#: The tool's name, as the agent definitions (agents/*.yaml) refer to it.
SEARCH_TOOL_NAME = "trilha_search"
_DESCRIPTION = (
    "Search the company's documents (BM25 + dense, with a knowledge-graph boost) and return "
    "passages with citations (doc_id, unit_id, page/section/heading)."
)


class SearchArgs(ToolArgs):
    """What the model chooses in a ``trilha_search`` call."""

    query: str = Field(min_length=1, description="What to search for, in the user's words.")
    top_k: int = Field(5, ge=1, le=50, description="How many passages to return.")
    lang: str | None = Field(
        None, description="Only passages in this language code (e.g. 'pt', 'en'); null: any."
    )
    tags: list[str] | None = Field(
        None, description="Only passages of documents with any of these tags; null: any."
    )


def passages_text(result: SearchResult) -> str:
    """Numbered passages, each with its citation, as an agent reads them."""
    if not result.hits:
        return "No passages found (or none visible to this user)."
    lines = []
    for i, hit in enumerate(result.hits, start=1):
        u = hit.unit
        where = ", ".join(
            f"{k}={v}"
            for k, v in (("page", u.page), ("section", u.section), ("heading", u.heading))
            if v not in (None, "")
        )
        cite = ", ".join(p for p in (u.doc_id, u.unit_id, where) if p)
        lines.append(f"[{i}] {u.title or u.doc_id} ({cite})")
        lines.append(u.text)
    return "\n".join(lines)


def search_tool(
    workspace: Workspace, principal: Principal | None = None, **request: Any
) -> FunctionTool:
    """A ``trilha_search`` tool over ``workspace`` searching as ``principal`` (anonymous when
    None), with ``request`` as fixed :class:`SearchRequest` fields (``merge``, ``kg``,
    ``rerank``…); bad fields are refused here, once."""
    template = SearchRequest.make("(template)", principal=principal, **request)
    workspace.plan(template)

    def build(args: SearchArgs) -> SearchRequest:
        filters = {k: v for k, v in (("lang", args.lang), ("tags", args.tags)) if v}
        return SearchRequest.make(
            template, query=args.query, top_k=args.top_k, filters=filters or None
        )

    def run(args: SearchArgs) -> SearchResult:
        return workspace.search(build(args))

    async def arun(args: SearchArgs) -> SearchResult:
        return await workspace.asearch(build(args))

    return schema_tool(SEARCH_TOOL_NAME, _DESCRIPTION, SearchArgs, run, arun, text=passages_text)
