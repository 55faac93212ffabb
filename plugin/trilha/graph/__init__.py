"""trilha.graph: the knowledge-graph layer (model, stores, ingest, seed 003 queries, KG boost,
exports, retrieval log).

Backends live in their own modules and import their drivers only when used:
:mod:`trilha.graph.stores.falkordb` (embedded or remote FalkorDB),
:mod:`trilha.graph.stores.bolt` (Neo4j, ArcadeDB), :mod:`trilha.graph.stores.llamaindex` (any
LlamaIndex ``PropertyGraphStore``).
"""

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
from trilha.graph.read.results import GraphEdge, GraphNode, PathResult, SubgraphResult, TopNResult
from trilha.graph.read.subgraph import subgraph
from trilha.graph.read.topn import topn
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore
from trilha.graph.stores.factory import open_graph_store

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
