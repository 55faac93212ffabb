"""Rerank: reorder candidates with a cross-encoder."""

from trilha.rerank.base import Reranker, apply_scores

__all__ = ["Reranker", "apply_scores"]
