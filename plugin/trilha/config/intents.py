"""Seed 004's closed vocabularies: retrieval intents and the named strategies.

An intent is what the Pre-Query step decides a question is about (REQ-RETR-002: ``factual``,
``graph_insight``, ``orientation``) or the intent a Query Profile serves (``organizational``,
``procedural``, ``strategic``, from the profile map). A strategy is how retrieval runs
(REQ-RETR-004): ``semantic_only`` (dense), ``keyword_only`` (BM25), ``graph_only`` (the
profile's graph walk), ``hybrid_semantic_graph`` (BM25 ∪ dense with the KG boost, and the
walk) and ``vector_rag`` (BM25 ∪ dense, reranked). Both are closed sets: a YAML naming anything
else is refused at load.
"""

from __future__ import annotations

from typing import Literal, get_args

Intent = Literal[
    "factual", "graph_insight", "orientation", "organizational", "procedural", "strategic"
]
Strategy = Literal[
    "semantic_only", "keyword_only", "graph_only", "hybrid_semantic_graph", "vector_rag"
]

#: Every intent, in declaration order.
INTENTS: tuple[Intent, ...] = get_args(Intent)
#: Every strategy, in declaration order.
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
