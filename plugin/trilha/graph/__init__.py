"""trilha.graph: the knowledge-graph layer (model, stores, ingest, seed 003 queries, KG boost,
exports, retrieval log).

Backends live in their own modules and import their drivers only when used:
:mod:`trilha.graph.falkordb` (embedded or remote FalkorDB), :mod:`trilha.graph.bolt` (Neo4j,
ArcadeDB), :mod:`trilha.graph.llamaindex_store` (any LlamaIndex ``PropertyGraphStore``).
"""

from trilha.graph.boost import BoostResult, BoostWeights, acompute_kg_boost, compute_kg_boost
from trilha.graph.export import build_context, mermaid, render_context_md
from trilha.graph.extract import ExtractedEntity, LLMEntityExtractor, RuleEntityExtractor
from trilha.graph.ingest import DeleteStats, GraphWriter, WriteStats
from trilha.graph.log import RetrievalLog, RetrievalLogEntry
from trilha.graph.queries import path, subgraph, topn
from trilha.graph.records import EdgeRecord, NodeRecord, load_records
from trilha.graph.results import GraphEdge, GraphNode, PathResult, SubgraphResult, TopNResult
from trilha.graph.service import GraphService, open_graph_store
from trilha.graph.store import GraphStore

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
    "acompute_kg_boost",
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
