"""How far two scorings of the same candidates agree: Spearman, Kendall and top-k overlap."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def _ranks(x: Sequence[float]) -> npt.NDArray[np.float64]:
    return np.argsort(np.argsort(np.asarray(x), kind="stable"), kind="stable").astype(np.float64)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rho of two score lists (ties ranked by position)."""
    ra, rb = _ranks(a), _ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 1 else 1.0


def kendall(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-a: (concordant - discordant) / pairs."""
    x, y = np.asarray(a), np.asarray(b)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    pairs = len(x) * (len(x) - 1)
    return float((dx * dy).sum() / pairs) if pairs else 1.0


def top_overlap(a: Sequence[float], b: Sequence[float], k: int = 10) -> float:
    """Share of the top ``k`` items by ``a`` that are also in the top ``k`` by ``b``."""
    top_a = set(np.argsort(-np.asarray(a), kind="stable")[:k].tolist())
    top_b = set(np.argsort(-np.asarray(b), kind="stable")[:k].tolist())
    return len(top_a & top_b) / max(1, min(k, len(a)))


def agreement(
    reference: Sequence[Sequence[float]], scores: Sequence[Sequence[float]]
) -> dict[str, float]:
    """Mean Spearman, Kendall and top-10 overlap of per-query score lists against a reference."""
    pairs = list(zip(reference, scores, strict=True))
    return {
        "spearman_vs_fp32": round(float(np.mean([spearman(a, b) for a, b in pairs])), 4),
        "kendall_vs_fp32": round(float(np.mean([kendall(a, b) for a, b in pairs])), 4),
        "top10_overlap_vs_fp32": round(float(np.mean([top_overlap(a, b) for a, b in pairs])), 4),
    }
