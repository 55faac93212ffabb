"""LlamaIndex adapters: thin classes at the edge over trilha's plain core."""

from trilha.llamaindex.embedding import LlamaIndexEmbedder, TrilhaEmbedding
from trilha.llamaindex.index import TrilhaIndex
from trilha.llamaindex.nodes import SCORE_KEYS, hit_to_node
from trilha.llamaindex.postprocessors import CrossEncoderRerank, KnowledgeGraphBoost
from trilha.llamaindex.query_engine import TrilhaQueryEngine
from trilha.llamaindex.retriever import TrilhaRetriever
from trilha.llamaindex.search_tool import search_tool

__all__ = [
    "SCORE_KEYS",
    "CrossEncoderRerank",
    "KnowledgeGraphBoost",
    "LlamaIndexEmbedder",
    "TrilhaEmbedding",
    "TrilhaIndex",
    "TrilhaQueryEngine",
    "TrilhaRetriever",
    "hit_to_node",
    "search_tool",
]
