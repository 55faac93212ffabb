"""LlamaIndex ``FunctionTool`` s over a workspace's graph, ready for the agents.

Each tool returns the seed 003 JSON (as text for the LLM; the model object is the tool's raw
output) and has an async variant that runs the graph call in a worker thread. Each tool's
arguments are one :class:`~trilha.llamaindex.tool_args.ToolArgs` model, the schema the model
sees. The tools answer as the ``principal`` they were made for (anonymous by default): the
agent cannot widen it, since no tool takes a principal argument.
"""

from __future__ import annotations

import json
from typing import Any

from llama_index.core.tools import FunctionTool
from pydantic import Field

from trilha.access import Principal
from trilha.graph.export.mermaid import mermaid
from trilha.graph.service import GraphService
from trilha.llamaindex.tool_args import ToolArgs, schema_tool
from trilha.workspace import Workspace

_ENTITIES = "Entity names as they appear in the documents (e.g. people, laws, topics)"


class SubgraphArgs(ToolArgs):
    """A document's neighbourhood in the graph (``trilha_graph_subgraph`` and ``_mermaid``)."""

    doc_id: str = Field(description="The document's id, as search results cite it.")
    entity_names: list[str] | None = Field(
        None, description=f"{_ENTITIES}; only paths towards these are kept; null: all."
    )
    max_hops: int = Field(2, ge=0, description="Hops from the document (larger than 2 is 2).")
    limit: int = Field(30, ge=1, description="Nodes and edges at most (larger than 500 is 500).")


class PathArgs(ToolArgs):
    """Two entities to join (``trilha_graph_path``)."""

    source_entity: str = Field(description="The entity the path starts from.")
    target_entity: str = Field(description="The entity the path ends at.")
    max_length: int = Field(4, ge=1, description="Edges at most (larger than 6 is 6).")


class TopNArgs(ToolArgs):
    """Which documents to rank (``trilha_graph_topn``)."""

    entity_names: list[str] | None = Field(
        None, description=f"{_ENTITIES}; documents mentioning them rank first."
    )
    category: str | None = Field(None, description="A document category that ranks higher.")
    language: str | None = Field(None, description="Only documents in this language code.")
    limit: int = Field(5, ge=1, description="Documents returned.")


class GraphContextArgs(ToolArgs):
    """What a context.md briefing is about (``trilha_graph_context``)."""

    entity_names: list[str] = Field(description=f"{_ENTITIES}; the briefing is about these.")
    doc_id: str | None = Field(None, description="A document to centre the subgraph on.")
    language: str | None = Field(
        None, description="Only documents in this language code; also the briefing's language."
    )
    limit: int = Field(5, ge=1, description="Top documents listed.")


def graph_tools(workspace: Workspace, principal: Principal | None = None) -> list[FunctionTool]:
    """subgraph, path, topn, mermaid and context tools over the workspace's graph, showing
    only what ``principal`` (None: anonymous) may see."""
    graph: GraphService = workspace.require_graph()
    return [*_graph_read_tools(graph, principal), *_graph_text_tools(graph, principal)]


def _graph_read_tools(graph: GraphService, who: Principal | None) -> list[FunctionTool]:
    """The seed 003 reads as tools: subgraph, path, top-N (JSON results)."""

    def subgraph(a: SubgraphArgs) -> dict[str, Any]:
        found = graph.subgraph(a.doc_id, a.entity_names, a.max_hops, a.limit, principal=who)
        return found.model_dump()

    def path(a: PathArgs) -> dict[str, Any]:
        found = graph.path(a.source_entity, a.target_entity, a.max_length, principal=who)
        return found.model_dump()

    def topn(a: TopNArgs) -> dict[str, Any]:
        found = graph.topn(a.entity_names, a.category, a.language, a.limit, principal=who)
        return found.model_dump()

    return [
        schema_tool(
            "trilha_graph_subgraph",
            "Nodes and edges around a document (at most 2 hops), optionally only towards the"
            " named entities. Limits are reported in 'constraints'.",
            SubgraphArgs,
            subgraph,
            text=_json,
        ),
        schema_tool(
            "trilha_graph_path",
            "Shortest chain of RELATED entities between two entities; an empty path when none.",
            PathArgs,
            path,
            text=_json,
        ),
        schema_tool(
            "trilha_graph_topn",
            "Documents most related to the entities, with readable reasons for each.",
            TopNArgs,
            topn,
            text=_json,
        ),
    ]


def _json(result: dict[str, Any]) -> str:
    """A read's result as the JSON text the model reads."""
    return json.dumps(result, ensure_ascii=False, default=str)


def _graph_text_tools(graph: GraphService, who: Principal | None) -> list[FunctionTool]:
    """The exports as tools: mermaid text of a subgraph, and a context.md briefing."""

    def graph_mermaid(a: SubgraphArgs) -> str:
        return mermaid(graph.subgraph(a.doc_id, a.entity_names, a.max_hops, a.limit, principal=who))

    def graph_context(a: GraphContextArgs) -> str:
        return graph.context_md(
            a.doc_id,
            a.entity_names,
            language=a.language,
            limit=a.limit,
            lang=a.language if a.language in ("en", "pt", "zh") else "en",
            principal=who,
        )

    return [
        schema_tool(
            "trilha_graph_mermaid",
            "Mermaid 'graph LR' text of a document's subgraph.",
            SubgraphArgs,
            graph_mermaid,
        ),
        schema_tool(
            "trilha_graph_context",
            "A context.md briefing: query entities, subgraph, evidence paths, top documents.",
            GraphContextArgs,
            graph_context,
        ),
    ]
