"""The reranker protocol, the pure step that turns model scores into reranked hits, and what a
search or an answer does when its reranker is unavailable."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from trilha.errors import BackendUnavailableError, MissingDependencyError, ModelLoadError
from trilha.retrieve.fusion import minmax
from trilha.types import Hit

log = logging.getLogger(__name__)

#: What a reranker that cannot serve raises: a remote one that is down, a model that cannot load
#: or whose runtime is not installed. A search and an answer that meet one keep the fused order
#: and record :func:`rerank_unavailable`'s warning in their trace.
RERANK_UNAVAILABLE: tuple[type[Exception], ...] = (
    BackendUnavailableError,
    ModelLoadError,
    MissingDependencyError,
)


def rerank_unavailable(error: Exception) -> str:
    """The warning of a rerank skipped for ``error`` (one of :data:`RERANK_UNAVAILABLE`), logged
    once here; the caller records it in its trace and keeps the fused order."""
    warning = f"rerank unavailable ({error}); kept the fused order"
    log.warning("%s", warning)
    return warning


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs and reorders hits by them."""

    top_n: int

    def score(
        self, query: str, passages: Sequence[str], max_length: int | None = None
    ) -> list[float]:
        """One relevance score per passage, higher is better; ``max_length``: the most tokens
        of each (query, passage) pair read in this call (None: the reranker's own limit)."""
        ...

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int | None = None) -> list[Hit]:
        """Hits reordered by relevance, the best ``top_n`` kept, earlier scores preserved."""
        ...


def apply_scores(
    hits: Sequence[Hit], scores: Sequence[float], top_n: int, blend: float = 0.0
) -> list[Hit]:
    """New hits ordered by the model's scores (stable on the incoming order), ``top_n`` kept.

    With ``blend`` > 0 the order key is ``(1 - blend)·minmax(model) + blend·minmax(fused)``;
    ``rerank`` still records the model's own score. Inputs are not mutated.
    """
    if len(scores) != len(hits):
        raise ValueError(f"{len(scores)} scores for {len(hits)} hits")
    keys = list(scores)
    if blend > 0:
        ids = [h.unit.unit_id for h in hits]
        m = minmax(dict(zip(ids, scores, strict=True)))
        f = minmax({h.unit.unit_id: h.scores.fused for h in hits})
        keys = [(1 - blend) * m[i] + blend * f[i] for i in ids]
    order = sorted(range(len(hits)), key=lambda i: -keys[i])
    out = []
    for rank, i in enumerate(order[:top_n], start=1):
        new_scores = hits[i].scores.model_copy(
            update={"rerank": float(scores[i]), "rerank_rank": rank}
        )
        out.append(Hit(unit=hits[i].unit, scores=new_scores))
    return out
