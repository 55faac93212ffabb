"""Timing of search calls: per-call wall times after a warm-up, their percentiles, stage medians."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

from trilha.types import SearchResult, Trace

#: Untimed calls before timing starts.
WARMUP = 5

#: A timed call: a query text in, its trace out (None when the system keeps no trace).
Call = Callable[[str], Trace | None]


def latency_summary(ms: Sequence[float]) -> dict[str, float]:
    """p50 and p95 (ms) and sequential throughput (queries per second) of per-call times."""
    arr = np.asarray(ms, dtype=np.float64)
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "qps": round(1000.0 * len(arr) / float(arr.sum()), 2),
    }


def time_calls(
    call: Call, texts: Sequence[str], warmup: int = WARMUP, desc: str = "", progress: bool = False
) -> tuple[list[float], list[Trace]]:
    """Per-call wall times (ms) over ``texts`` after ``warmup`` untimed calls, and the traces."""
    for text in texts[:warmup]:
        call(text)
    times: list[float] = []
    traces: list[Trace] = []
    for text in tqdm(texts, desc=desc, unit="q", disable=not progress):
        start = time.perf_counter()
        trace = call(text)
        times.append((time.perf_counter() - start) * 1000.0)
        if trace is not None:
            traces.append(trace)
    return times, traces


def paired_ratio(base: Call, other: Call, texts: Sequence[str], warmup: int = WARMUP) -> float:
    """``other``'s P50 over ``base``'s, the two timed in turn on every text (which goes first
    alternates), so that the machine's drift during the run hits both alike."""
    for text in texts[:warmup]:
        base(text)
        other(text)
    times: tuple[list[float], list[float]] = ([], [])
    for i, text in enumerate(texts):
        for side in (0, 1) if i % 2 == 0 else (1, 0):
            start = time.perf_counter()
            (base, other)[side](text)
            times[side].append((time.perf_counter() - start) * 1000.0)
    return round(float(np.percentile(times[1], 50) / np.percentile(times[0], 50)), 3)


def stage_p50(traces: Sequence[Trace]) -> dict[str, float]:
    """Median latency of every stage name seen in the traces."""
    seen: dict[str, list[float]] = {}
    for trace in traces:
        for stage in trace.stages:
            seen.setdefault(stage.name, []).append(stage.latency_ms)
    return {name: round(float(np.median(v)), 2) for name, v in seen.items()}


def trace_of(search: Callable[[str], SearchResult]) -> Call:
    """A search as a timed call."""
    return lambda text: search(text).trace
