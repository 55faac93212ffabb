"""The orchestrator inside LlamaIndex: a retriever of context items and an agent tool.

:class:`OrchestratorRetriever` returns a bundle's items as nodes (citation fields shown to the
LLM, the rest hidden) and keeps the whole :class:`~trilha.orchestrate.ContextBundle` of its last
call. :func:`context_tool` is the ``trilha_context`` tool: the LLM reads the items with their
citations; the bundle itself is the tool's ``raw_output``. Both act for the user they were made
for: neither takes a user, a principal or a role from the LLM.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.tools import FunctionTool
from pydantic import Field

from trilha.access.principal import Principal
from trilha.llamaindex.tool_args import ToolArgs, schema_tool
from trilha.orchestrate import ContextBundle, ContextItem, Orchestrator, RetrievalRequest

#: Item metadata the LLM sees next to the text.
SHOWN = ("citation", "memory_class", "item_type")


def item_node(item: ContextItem) -> NodeWithScore:
    """A node whose id is the item id, with its citation, class and provenance as metadata."""
    metadata: dict[str, Any] = {
        "citation": item.citation.label,
        "memory_class": item.memory_class,
        "item_type": item.item_type,
        **{f"provenance_{k}": v for k, v in item.provenance.model_dump().items()},
        **item.citation.model_dump(exclude={"label"}, exclude_none=True),
    }
    hidden = [k for k in metadata if k not in SHOWN]
    node = TextNode(
        id_=item.item_id,
        text=item.text,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=item.score)


class OrchestratorRetriever(BaseRetriever):
    """Context items for one user and conversation as LlamaIndex nodes (sync and async).

    The keyword arguments are :class:`~trilha.orchestrate.RetrievalRequest` fields other than
    ``raw_query`` (``user_id`` and ``conversation_id`` are required), checked once here;
    ``principal``, when a front authenticated the caller (an API key), reads as that principal.
    """

    def __init__(self, orchestrator: Orchestrator, **request: Any) -> None:
        super().__init__(callback_manager=request.pop("callback_manager", None))
        self.orchestrator = orchestrator
        self.principal: Principal | None = request.pop("principal", None)
        self.template = RetrievalRequest.make(raw_query="(template)", **request)
        if self.principal is None:
            orchestrator.principal_for(self.template.user_id)  # an unknown user is refused now
        self.last_bundle: ContextBundle | None = None

    def bundle(self, query: str) -> ContextBundle:
        """The whole ContextBundle for ``query``."""
        request = self.template.model_copy(update={"raw_query": query})
        return self.orchestrator.retrieve(request, self.principal)

    async def abundle(self, query: str) -> ContextBundle:
        """Async :meth:`bundle`."""
        request = self.template.model_copy(update={"raw_query": query})
        return await self.orchestrator.aretrieve(request, self.principal)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.last_bundle = self.bundle(query_bundle.query_str)
        return [item_node(item) for item in self.last_bundle.context_items]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.last_bundle = await self.abundle(query_bundle.query_str)
        return [item_node(item) for item in self.last_bundle.context_items]


def bundle_text(bundle: ContextBundle) -> str:
    """What the LLM reads from a bundle: instructions, then each item with its citation."""
    lines = [bundle.retrieval_summary, *bundle.llm_instructions, ""]
    for n, item in enumerate(bundle.context_items, 1):
        lines.append(f"[{n}] ({item.memory_class}) {item.text}\n    source: {item.citation.label}")
    return "\n".join(lines)


#: What the model reads of ``trilha_context``.
CONTEXT_DESCRIPTION = (
    "Context for a question: cited items from documents, the graph (tasks, projects, "
    "objectives), claims and this user's memory, only what the user may see."
)


class ContextArgs(ToolArgs):
    """What the model passes to ``trilha_context``."""

    question: str = Field(min_length=1, description="The user's question, in their words.")


def context_tool(
    orchestrator: Orchestrator, name: str = "trilha_context", **request: Any
) -> FunctionTool:
    """The ``trilha_context`` tool for one user (``request`` as for
    :class:`OrchestratorRetriever`); its raw output is the ContextBundle."""
    retriever = OrchestratorRetriever(orchestrator, **request)

    def run(args: ContextArgs) -> ContextBundle:
        return retriever.bundle(args.question)

    async def arun(args: ContextArgs) -> ContextBundle:
        return await retriever.abundle(args.question)

    return schema_tool(name, CONTEXT_DESCRIPTION, ContextArgs, run, arun, text=bundle_text)
