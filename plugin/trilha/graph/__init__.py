"""trilha.graph: the knowledge-graph layer (model, stores, ingest, seed 003 queries, KG boost,
exports, retrieval log).

Backends live in their own modules and import their drivers only when used:
:mod:`trilha.graph.stores.falkordb` (embedded or remote FalkorDB),
:mod:`trilha.graph.stores.bolt` (Neo4j, ArcadeDB), :mod:`trilha.graph.stores.llamaindex` (any
LlamaIndex ``PropertyGraphStore``).
"""

from typing import TYPE_CHECKING, Any

from trilha.lazy import attribute

if TYPE_CHECKING:
    from trilha.graph.boost.score import BoostResult, BoostWeights, compute_kg_boost
    from trilha.graph.build.extract import ExtractedEntity, RuleEntityExtractor
    from trilha.graph.build.llm_extract import LLMEntityExtractor
    from trilha.graph.build.records import EdgeRecord, NodeRecord, load_records
    from trilha.graph.build.removal import DeleteStats
    from trilha.graph.build.writer import GraphWriter, WriteStats
    from trilha.graph.export.context import build_context, render_context_md
    from trilha.graph.export.mermaid import mermaid
    from trilha.graph.log import RetrievalLog, RetrievalLogEntry
    from trilha.graph.read.path import path
    from trilha.graph.read.results import (
        GraphEdge,
        GraphNode,
        PathResult,
        SubgraphResult,
        TopNResult,
    )
    from trilha.graph.read.subgraph import subgraph
    from trilha.graph.read.topn import topn
    from trilha.graph.service import GraphService
    from trilha.graph.stores.base import GraphStore
    from trilha.graph.stores.factory import open_graph_store

#: The module of each public name, imported on first use: a search that reads the graph does not
#: load its writer, exports or path search.
_WHERE = {
    "BoostResult": "trilha.graph.boost.score",
    "BoostWeights": "trilha.graph.boost.score",
    "DeleteStats": "trilha.graph.build.removal",
    "EdgeRecord": "trilha.graph.build.records",
    "ExtractedEntity": "trilha.graph.build.extract",
    "GraphEdge": "trilha.graph.read.results",
    "GraphNode": "trilha.graph.read.results",
    "GraphService": "trilha.graph.service",
    "GraphStore": "trilha.graph.stores.base",
    "GraphWriter": "trilha.graph.build.writer",
    "LLMEntityExtractor": "trilha.graph.build.llm_extract",
    "NodeRecord": "trilha.graph.build.records",
    "PathResult": "trilha.graph.read.results",
    "RetrievalLog": "trilha.graph.log",
    "RetrievalLogEntry": "trilha.graph.log",
    "RuleEntityExtractor": "trilha.graph.build.extract",
    "SubgraphResult": "trilha.graph.read.results",
    "TopNResult": "trilha.graph.read.results",
    "WriteStats": "trilha.graph.build.writer",
    "build_context": "trilha.graph.export.context",
    "compute_kg_boost": "trilha.graph.boost.score",
    "load_records": "trilha.graph.build.records",
    "mermaid": "trilha.graph.export.mermaid",
    "open_graph_store": "trilha.graph.stores.factory",
    "path": "trilha.graph.read.path",
    "render_context_md": "trilha.graph.export.context",
    "subgraph": "trilha.graph.read.subgraph",
    "topn": "trilha.graph.read.topn",
}


def __getattr__(name: str) -> Any:
    return attribute(globals(), _WHERE, name)


__all__ = [
    "BoostResult",
    "BoostWeights",
    "DeleteStats",
    "EdgeRecord",
    "ExtractedEntity",
    "GraphEdge",
    "GraphNode",
    "GraphService",
    "GraphStore",
    "GraphWriter",
    "LLMEntityExtractor",
    "NodeRecord",
    "PathResult",
    "RetrievalLog",
    "RetrievalLogEntry",
    "RuleEntityExtractor",
    "SubgraphResult",
    "TopNResult",
    "WriteStats",
    "build_context",
    "compute_kg_boost",
    "load_records",
    "mermaid",
    "open_graph_store",
    "path",
    "render_context_md",
    "subgraph",
    "topn",
]
