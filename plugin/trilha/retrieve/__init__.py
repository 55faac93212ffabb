"""Retrieval: the hybrid searcher that runs both indices and merges them."""

from trilha.retrieve.hybrid import HybridSearcher, SearchParams, per_side_candidates

__all__ = ["HybridSearcher", "SearchParams", "per_side_candidates"]
