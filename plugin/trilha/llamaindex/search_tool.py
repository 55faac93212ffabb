"""``trilha_search``: hybrid search as a LlamaIndex ``FunctionTool`` for agents.

The principal and the fixed request fields are bound when the tool is made (an agent cannot
widen what it may see by choosing arguments); the LLM chooses the query, how many results and
the document filters. The tool's text (``ToolOutput.content``) lists each passage with its
citation; its raw output is the :class:`~trilha.types.SearchResult` with every score and the
trace.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.tools import FunctionTool, ToolMetadata

from trilha.access.principal import Principal
from trilha.request import SearchRequest
from trilha.types import SearchResult
from trilha.workspace import Workspace

#: The tool's name, as the agent definitions (agents/*.yaml) refer to it.
SEARCH_TOOL_NAME = "trilha_search"
_DESCRIPTION = (
    "Search the company's documents (BM25 + dense, with a knowledge-graph boost) and return "
    "passages with citations (doc_id, unit_id, page/section/heading). Arguments: query (text); "
    "top_k (results, default 5); lang (e.g. 'pt' or 'en'); tags (any of these)."
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

    def build(query: str, top_k: int, lang: str | None, tags: list[str] | None) -> SearchRequest:
        filters = {k: v for k, v in (("lang", lang), ("tags", tags)) if v}
        return SearchRequest.make(template, query=query, top_k=top_k, filters=filters or None)

    def trilha_search(
        query: str, top_k: int = 5, lang: str | None = None, tags: list[str] | None = None
    ) -> SearchResult:
        """Search documents; passages with citations."""
        return workspace.search(build(query, top_k, lang, tags))

    async def atrilha_search(
        query: str, top_k: int = 5, lang: str | None = None, tags: list[str] | None = None
    ) -> SearchResult:
        return await workspace.asearch(build(query, top_k, lang, tags))

    async def apassages(result: SearchResult) -> str:
        return passages_text(result)

    return FunctionTool.from_defaults(
        fn=trilha_search,
        async_fn=atrilha_search,
        tool_metadata=ToolMetadata(name=SEARCH_TOOL_NAME, description=_DESCRIPTION),
        callback=passages_text,
        async_callback=apassages,
    )
