"""The ``orchestrated`` rows of ``trilha bench``: warm latency of
:meth:`Orchestrator.retrieve <trilha.orchestrate.Orchestrator.retrieve>` (and ``aretrieve``) at
depth D2 without rerank, over the BEIR queries, with the P50 of every step of the bundle trace.

The caller is a user of the workspace's ``principals.yaml`` when it has one (the first user id
in sorted order), else :data:`~trilha.eval.principal.BENCH_PRINCIPAL`, who sees the public
corpus; the report names which. Memory and the job log live in a temporary folder and jobs are
not mirrored into the graph, so the workspace is left as it was (the job's SQLite record is
timed, as in every retrieval; the graph mirror runs in the background anyway); each call is a
fresh conversation.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trilha.access import Principal
from trilha.access.directory import PRINCIPALS_FILE, load_principals
from trilha.eval.principal import BENCH_PRINCIPAL
from trilha.eval.timing import latency_summary, time_calls
from trilha.memory.jobs import JobLog
from trilha.memory.store import MemoryStore
from trilha.orchestrate import ContextBundle, Orchestrator
from trilha.orchestrate.joblog import JobRecorder
from trilha.workspace import Workspace

#: The depth the target is about: working set, episodic and semantic memory, one profile walk.
DEPTH = "D2"


def bench_principals(ws: Workspace) -> tuple[dict[str, Principal], str, str]:
    """The principals the bench runs with, the user it asks as and where they come from."""
    path = ws.path / PRINCIPALS_FILE
    if path.exists():
        known = load_principals(path)
        if known:
            return known, min(known), PRINCIPALS_FILE
    user = BENCH_PRINCIPAL.user_id or "bench-user"
    return {user: BENCH_PRINCIPAL}, user, "bench principal"


def step_p50(bundles: Sequence[ContextBundle]) -> dict[str, float]:
    """Median latency (ms) of every step name in the bundles' traces, and of the whole call as
    the trace measured it (``total``)."""
    seen: dict[str, list[float]] = {}
    for bundle in bundles:
        for step in bundle.trace.stages:
            seen.setdefault(step.name, []).append(step.latency_ms)
        seen.setdefault("total", []).append(bundle.trace.latency_ms)
    return {name: round(float(np.median(v)), 2) for name, v in seen.items()}


def bench_orchestrated(
    ws: Workspace, texts: Sequence[str], progress: bool = False
) -> dict[str, Any]:
    """``systems`` rows (``orchestrated``, ``orchestrated_async``), their step medians
    (``stages``) and what they ran (``orchestrated``: principal, depth, strategies, intents)."""
    principals, user, source = bench_principals(ws)
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory(prefix="trilha-bench-memory-") as tmp:
        memory, jobs = MemoryStore(Path(tmp) / "m.sqlite"), JobLog(Path(tmp) / "m.sqlite")
        orch = Orchestrator(ws, principals=principals, memory=memory, jobs=jobs)
        orch.recorder = JobRecorder(jobs, None)  # jobs logged in SQLite, not into the graph
        try:
            sync_ms, bundles = _timed(orch.retrieve, user, texts, "orchestrated", progress)
            async_ms, abundles = _timed(
                lambda r: loop.run_until_complete(orch.aretrieve(r)),
                user,
                texts,
                "orchestrated_async",
                progress,
            )
        finally:
            orch.close()
            loop.close()
            memory.close()
            jobs.close()
    return {
        "systems": {
            "orchestrated": latency_summary(sync_ms),
            "orchestrated_async": latency_summary(async_ms),
        },
        "stages": {"orchestrated": step_p50(bundles), "orchestrated_async": step_p50(abundles)},
        "orchestrated": {
            "principal": {"user_id": user, "from": source},
            "depth": DEPTH,
            "rerank": False,
            "strategies": _counts(b.strategies_used[0] for b in bundles if b.strategies_used),
            "intents": _counts(b.trace.prequery.retrieval_intent for b in bundles),
        },
    }


Retrieve = Callable[[dict[str, Any]], ContextBundle]


def _timed(
    retrieve: Retrieve, user: str, texts: Sequence[str], desc: str, progress: bool
) -> tuple[list[float], list[ContextBundle]]:
    """Timed calls of ``retrieve`` over ``texts`` (after the warm-up), and their bundles."""
    bundles: list[ContextBundle] = []

    def call(text: str) -> None:
        request = {
            "user_id": user,
            "conversation_id": f"bench-{len(bundles)}",
            "raw_query": text,
            "agent_type": "knowledge",
            "depth": DEPTH,
        }
        bundles.append(retrieve(request))

    times, _ = time_calls(call, texts, desc=desc, progress=progress)
    return times, bundles[len(bundles) - len(times) :]


def _counts(values: Iterable[str]) -> dict[str, int]:
    return dict(Counter(values).most_common())
