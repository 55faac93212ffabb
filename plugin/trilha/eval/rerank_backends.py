"""The cross-encoder's backends and precisions compared: latency, and agreement with fp32 torch."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from trilha.encode.onnx_export import model_cache
from trilha.eval.agreement import agreement
from trilha.eval.timing import latency_summary
from trilha.ingest.chunking import index_text
from trilha.rerank.cross_encoder import Backend, Precision
from trilha.workspace import Workspace
from trilha.workspace.compose import older_models

log = logging.getLogger(__name__)

#: (backend, precision) variants compared for rerank; fp32 torch is the reference order.
RERANK_VARIANTS: tuple[tuple[Backend, Precision], ...] = (
    ("torch", "fp32"),
    ("torch", "bf16"),
    ("onnx", "fp32"),
    ("onnx", "int8"),
)


def bench_rerank(
    ws: Workspace, model: str, texts: Sequence[str], pool: int = 40, max_length: int = 256
) -> dict[str, Any]:
    """p50 of scoring ``pool`` candidates per backend, and agreement with torch fp32; bf16 is
    skipped, saying so, on a CPU without native bf16 (emulated, it is ~7× slower than fp32)."""
    from trilha.rerank.cross_encoder import CrossEncoderReranker, native_bf16_precision

    cands = [(t, [index_text(h.unit) for h in ws.search(t, top_k=pool).hits]) for t in texts]
    out: dict[str, Any] = {"pairs": pool, "max_length": max_length, "queries": len(cands)}
    reference: list[list[float]] | None = None
    for backend, precision in RERANK_VARIANTS:
        if precision == "bf16" and native_bf16_precision() != "bf16":
            out[f"{backend}_{precision}"] = {"available": False, "why": "no native bf16 here"}
            continue
        ce = CrossEncoderReranker(
            model,
            max_length=max_length,
            backend=backend,
            precision=precision,
            cache_dir=model_cache(ws.settings.model_cache),
            older_cache=older_models(ws.path),
        )
        try:
            times, scores = _time_scoring(ce.score, cands)
        except Exception as e:  # recorded, not raised: a benchmark reports what it could not do
            log.warning("rerank %s/%s unavailable: %s", backend, precision, e)
            out[f"{backend}_{precision}"] = {"available": False, "why": str(e)[:400]}
            continue
        if reference is None:
            reference = scores
            out["reference"] = f"{backend}_{precision}"
        out[f"{backend}_{precision}"] = {
            "available": True,
            **latency_summary(times),
            **agreement(reference, scores),
        }
    return out


def _time_scoring(
    score: Callable[[str, Sequence[str]], list[float]], cands: Sequence[tuple[str, list[str]]]
) -> tuple[list[float], list[list[float]]]:
    for q, passages in cands[:2]:
        score(q, passages)
    times, scores = [], []
    for q, passages in cands:
        start = time.perf_counter()
        scores.append(score(q, passages))
        times.append((time.perf_counter() - start) * 1000.0)
    return times, scores
