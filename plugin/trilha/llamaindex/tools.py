"""LlamaIndex ``FunctionTool`` s over a workspace's graph, ready for the agents.

Each tool returns the seed 003 JSON (as text for the LLM; the model object is the tool's raw
output) and has an async variant that runs the graph call in a worker thread. The tools
answer as the ``principal`` they were made for (anonymous by default): the agent cannot widen
it, since no tool takes a principal argument.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from llama_index.core.tools import FunctionTool

from trilha.access import Principal
from trilha.graph.export.mermaid import mermaid
from trilha.graph.service import GraphService
from trilha.workspace import Workspace


def _tool(fn: Callable[..., Any], name: str, description: str) -> FunctionTool:
    async def afn(*args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kwargs)

    afn.__signature__ = __import__("inspect").signature(fn)  # type: ignore[attr-defined]
    return FunctionTool.from_defaults(fn=fn, async_fn=afn, name=name, description=description)


def graph_tools(workspace: Workspace, principal: Principal | None = None) -> list[FunctionTool]:
    """subgraph, path, topn, mermaid and context tools over the workspace's graph, showing
    only what ``principal`` (None: anonymous) may see."""
    graph: GraphService = workspace.require_graph()
    return [*_graph_read_tools(graph, principal), *_graph_text_tools(graph, principal)]


def _graph_read_tools(graph: GraphService, who: Principal | None) -> list[FunctionTool]:
    """The seed 003 reads as tools: subgraph, path, top-N (JSON results)."""

    def graph_subgraph(
        doc_id: str, entity_names: list[str] | None = None, max_hops: int = 2, limit: int = 30
    ) -> dict[str, Any]:
        """Nodes and edges around a document (at most 2 hops), optionally only towards the
        named entities. Limits are reported in 'constraints'."""
        return graph.subgraph(doc_id, entity_names, max_hops, limit, principal=who).model_dump()

    def graph_path(source_entity: str, target_entity: str, max_length: int = 4) -> dict[str, Any]:
        """Shortest chain of RELATED entities between two entities; an empty path when none."""
        return graph.path(source_entity, target_entity, max_length, principal=who).model_dump()

    def graph_topn(
        entity_names: list[str] | None = None,
        category: str | None = None,
        language: str | None = None,
        limit: int = 5,
    ) -> dict[str, Any]:
        """Documents most related to the entities, with readable reasons for each."""
        return graph.topn(entity_names, category, language, limit, principal=who).model_dump()

    return [
        _tool(graph_subgraph, "trilha_graph_subgraph", graph_subgraph.__doc__ or ""),
        _tool(graph_path, "trilha_graph_path", graph_path.__doc__ or ""),
        _tool(graph_topn, "trilha_graph_topn", graph_topn.__doc__ or ""),
    ]


def _graph_text_tools(graph: GraphService, who: Principal | None) -> list[FunctionTool]:
    """The exports as tools: mermaid text of a subgraph, and a context.md briefing."""

    def graph_mermaid(
        doc_id: str, entity_names: list[str] | None = None, max_hops: int = 2, limit: int = 30
    ) -> str:
        """Mermaid 'graph LR' text of a document's subgraph."""
        return mermaid(graph.subgraph(doc_id, entity_names, max_hops, limit, principal=who))

    def graph_context(
        entity_names: list[str],
        doc_id: str | None = None,
        language: str | None = None,
        limit: int = 5,
    ) -> str:
        """A context.md briefing: query entities, subgraph, evidence paths, top documents."""
        return graph.context_md(
            doc_id,
            entity_names,
            language=language,
            limit=limit,
            lang=language if language in ("en", "pt", "zh") else "en",
            principal=who,
        )

    return [
        _tool(graph_mermaid, "trilha_graph_mermaid", graph_mermaid.__doc__ or ""),
        _tool(graph_context, "trilha_graph_context", graph_context.__doc__ or ""),
    ]
