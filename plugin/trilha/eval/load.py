"""``trilha load``: concurrent clients against the HTTP service on loopback, timed.

Each client loops for ``duration_s``: it picks a call from a mix of ``/v1/retrieve``,
``/v1/context`` and ``/graphrag/*`` (built from the demo's questions and documents), sends it,
and records when it ended, the route, the status, the latency and whether the answer was
degraded (a 200 whose trace carries a warning). The report gives P50/P95/P99 per route and
overall, the P95 of the first and last 30 s (is latency stable?), statuses, errors (a transport
failure or a 5xx other than a graph route's 503 while the graph is down), and what happened
after ``kill_at`` when the graph server is killed mid-run.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

#: The window, in seconds, compared at the start and the end of a run.
WINDOW_S = 30.0
#: Of every ten calls, how many go to each route family.
MIX = {"/v1/retrieve": 6, "/v1/context": 2, "/graphrag": 2}


@dataclass(frozen=True)
class Call:
    """One request a client may send."""

    path: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Sample:
    """One request as it went: when it ended (s from the start), where, how, how long."""

    at_s: float
    path: str
    status: int
    ms: float
    degraded: bool


def demo_calls(
    questions: Sequence[str], doc_ids: Sequence[str], entities: Sequence[str]
) -> dict[str, list[Call]]:
    """The calls of each route family, from the demo's questions, documents and entities."""
    retrieve = [Call("/v1/retrieve", {"query": q, "top_k": 10}) for q in questions]
    context = [Call("/v1/context", {"raw_query": q, "conversation_id": "load"}) for q in questions]
    graph = [Call("/graphrag/subgraph", {"doc_id": d}) for d in doc_ids]
    graph += [Call("/graphrag/topn", {"entity_names": [e], "limit": 5}) for e in entities]
    pairs = itertools.pairwise(entities)
    graph += [Call("/graphrag/path", {"source_entity": a, "target_entity": b}) for a, b in pairs]
    return {"/v1/retrieve": retrieve, "/v1/context": context, "/graphrag": graph}


def _degraded(response: httpx.Response) -> bool:
    if response.status_code != 200:
        return False
    try:
        trace = response.json().get("trace") or {}
    except ValueError:
        return False
    return bool(trace.get("warnings")) if isinstance(trace, dict) else False


async def _client(
    http: httpx.AsyncClient, calls: dict[str, list[Call]], until: float, start: float,
    seed: int, think_s: float, samples: list[Sample],
) -> None:  # fmt: skip
    rng = random.Random(seed)
    families = [f for f in MIX if calls.get(f)]
    weights = [MIX[f] for f in families]
    while time.perf_counter() < until:
        call = rng.choice(calls[rng.choices(families, weights)[0]])
        t0 = time.perf_counter()
        try:
            response = await http.post(call.path, json=call.body)
            status, degraded = response.status_code, _degraded(response)
        except httpx.HTTPError:
            status, degraded = 0, False
        end = time.perf_counter()
        samples.append(Sample(end - start, call.path, status, (end - t0) * 1000, degraded))
        if think_s > 0:  # a caller reading the answer before its next question
            await asyncio.sleep(min(rng.expovariate(1 / think_s), until - end))


async def run_load(
    url: str, headers: dict[str, str], calls: dict[str, list[Call]], clients: int,
    duration_s: float, kill_at: tuple[float, Callable[[], None]] | None = None,
    think_s: float = 0.0,
) -> list[Sample]:  # fmt: skip
    """Run ``clients`` concurrent clients for ``duration_s``, each waiting a random think time
    (exponential, mean ``think_s``; 0: none) between calls; ``kill_at`` = (seconds, action)
    runs the action (stop the graph server) that far into the run."""
    samples: list[Sample] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as http:
        start = time.perf_counter()
        until = start + duration_s
        tasks = [_client(http, calls, until, start, i, think_s, samples) for i in range(clients)]
        if kill_at is not None:
            tasks.append(_later(kill_at[0], kill_at[1]))
        await asyncio.gather(*tasks)
    return samples


async def _later(delay_s: float, action: Callable[[], None]) -> None:
    await asyncio.sleep(delay_s)
    await asyncio.to_thread(action)


def _stats(samples: Sequence[Sample]) -> dict[str, Any]:
    if not samples:
        return {"count": 0}
    p50, p95, p99 = np.percentile([s.ms for s in samples], [50, 95, 99])
    return {
        "count": len(samples),
        "p50_ms": round(float(p50), 2),
        "p95_ms": round(float(p95), 2),
        "p99_ms": round(float(p99), 2),
        "statuses": dict(Counter(str(s.status) for s in samples)),
        "degraded": sum(s.degraded for s in samples),
    }


def is_error(sample: Sample, graph_down_since: float | None) -> bool:
    """A transport failure or a 5xx, except a graph route's 503 once the graph was killed."""
    if sample.status == 0:
        return True
    refused_by_design = (
        sample.status == 503
        and sample.path.startswith("/graphrag")
        and graph_down_since is not None
        and sample.at_s >= graph_down_since
    )
    return sample.status >= 500 and not refused_by_design


def report(
    samples: Sequence[Sample], duration_s: float, clients: int, kill_at_s: float | None = None
) -> dict[str, Any]:
    """P50/P95/P99 overall and per route, first and last window, errors, throughput."""
    by_route: dict[str, list[Sample]] = {}
    for s in samples:
        by_route.setdefault(s.path, []).append(s)
    first = [s for s in samples if s.at_s <= WINDOW_S]
    last = [s for s in samples if s.at_s >= duration_s - WINDOW_S]
    out: dict[str, Any] = {
        "clients": clients,
        "duration_s": duration_s,
        "requests": len(samples),
        "throughput_rps": round(len(samples) / duration_s, 1) if duration_s else 0.0,
        "errors": sum(is_error(s, kill_at_s) for s in samples),
        "overall": _stats(samples),
        "routes": {route: _stats(rows) for route, rows in sorted(by_route.items())},
        "first_window": _stats(first),
        "last_window": _stats(last),
    }
    if kill_at_s is not None:
        after = [s for s in samples if s.at_s >= kill_at_s]
        out["graph_killed_at_s"] = kill_at_s
        out["after_kill"] = {route: _stats([s for s in after if s.path == route])
                             for route in sorted(by_route)}  # fmt: skip
    return out
