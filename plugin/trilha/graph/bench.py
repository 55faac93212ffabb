"""Graph benchmark: build a synthetic graph fast, then time subgraph, path and top-N.

The graph: ``entities`` Entity nodes and ``edges`` random RELATED edges between them, plus a
document layer for the document queries: ``entities // 20`` Docs (10 categories, dates over
2020–2024, pt/en), 2 Chunks per Doc (PART_OF) and 5 MENTIONS per Chunk, plus, for each
RELATED edge, MENTIONS of its two ends from one chunk (a RELATED edge is seen only when a
visible chunk mentions both ends). Docs and chunks are public, and the queries run as the
anonymous principal or ``--principal``, so every read pays for its visibility test. Loading
uses batched ``UNWIND ... CREATE`` of ``batch_size`` rows per statement into an empty graph,
then gives the RELATED edges their access summaries (:func:`trilha.graph.support.
upgrade_support`, as on opening an older graph; ``summary_seconds``). Then ``queries`` random
calls of each retrieval (after a few warm-up calls) give the P50/P95 latencies.

Run: ``python -m trilha.graph.bench --backend falkordb|arcadedb|bolt [--entities N]
[--edges M] [--queries Q] [--path-length L] [--principal JSON] [--url bolt://... --user U
--password P --database D]``; it prints one JSON object. ``arcadedb`` starts its own ArcadeDB
Bolt server. ``--principal`` is a :class:`~trilha.access.Principal` as a JSON object, e.g.
``'{"user_id": "ana", "org_ids": ["acme"], "roles": ["it"], "clearance": 2}'``.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from trilha.access import Principal
from trilha.errors import BadRequestError, ConfigurationError, one_line
from trilha.graph.read.path import path as read_path
from trilha.graph.read.subgraph import subgraph as read_subgraph
from trilha.graph.read.topn import topn as read_topn
from trilha.graph.stores.base import GraphStore
from trilha.graph.support import upgrade_support
from trilha.graph.synthetic import build_synthetic

logger = logging.getLogger(__name__)

__all__ = ["build_synthetic", "main", "run_bench"]


def _p(values: list[float], q: float) -> float:
    return (
        round(statistics.quantiles(values, n=100)[int(q) - 1], 3)
        if len(values) > 1
        else (round(values[0], 3) if values else 0.0)
    )


def _timed(calls: Sequence[Callable[[], Any]], warmup: int = 3) -> tuple[list[float], list[Any]]:
    for call in calls[:warmup]:
        call()
    times, results = [], []
    for call in calls:
        start = time.perf_counter()
        results.append(call())
        times.append((time.perf_counter() - start) * 1000)
    return times, results


Call = Callable[[], Any]
Calls = tuple[list[Call], list[Call], list[Call]]


def _calls(
    store: GraphStore,
    counts: dict[str, int],
    n_queries: int,
    seed: int,
    path_length: int,
    principal: Principal | None,
) -> Calls:
    """The random subgraph, path and top-N calls, as ``principal`` (None: anonymous)."""
    rng = np.random.default_rng(seed + 1)
    ids = rng.integers(0, counts["entities"], size=(n_queries, 2))
    subs: list[Call] = [
        partial(read_subgraph, store, f"d{d}", None, 2, 50, principal=principal)
        for d in rng.integers(0, counts["docs"], size=n_queries)
    ]
    walks: list[Call] = [
        partial(read_path, store, f"E{a}", f"E{b}", path_length, principal=principal)
        for a, b in ids
    ]
    tops: list[Call] = [
        partial(read_topn, store, [f"E{a}", f"E{b}"], f"c{c}", None, 10, principal=principal)
        for (a, b), c in zip(ids, rng.integers(0, 10, size=n_queries), strict=True)
    ]
    return subs, walks, tops


def run_bench(
    store: GraphStore,
    entities: int = 100_000,
    edges: int = 300_000,
    *,
    n_queries: int = 50,
    seed: int = 0,
    batch_size: int = 5000,
    backend: str | None = None,
    path_length: int = 6,
    principal: Principal | None = None,
) -> dict[str, Any]:
    """Build the graph, summarise its RELATED edges and measure the three retrievals as
    ``principal`` (None: anonymous); the numbers as a dict."""
    start = time.perf_counter()
    counts = build_synthetic(store, entities, edges, seed=seed, batch_size=batch_size)
    build = time.perf_counter() - start
    upgrade_support(store, batch_size)
    summary = time.perf_counter() - start - build
    subs, walks, tops = _calls(store, counts, n_queries, seed, path_length, principal)
    sub_t, _ = _timed(subs)
    path_t, paths = _timed(walks)
    top_t, _ = _timed(tops)
    times = {"subgraph": sub_t, "path": path_t, "topn": top_t}
    return {
        "backend": backend or store.name,
        **counts,
        "build_seconds": round(build, 2),
        "summary_seconds": round(summary, 2),
        "principal": (principal or Principal.anonymous()).describe(),
        **{f"{name}_p{q}_ms": _p(t, q) for q in (50, 95) for name, t in times.items()},
        "paths_found": sum(p.meta.found for p in paths),
        "path_max_length": path_length,
        "queries": n_queries,
    }


def parse_principal(text: str | None) -> Principal | None:
    """The ``--principal`` JSON object as a :class:`Principal` (None: anonymous); a bad one is
    one :class:`BadRequestError` line."""
    if text is None:
        return None
    try:
        return Principal.model_validate_json(text)
    except ValidationError as e:
        raise BadRequestError(f"--principal: {one_line(e)}") from None


def _store(args: argparse.Namespace, folder: Path) -> tuple[GraphStore, Callable[[], None]]:
    if args.backend == "falkordb":
        from trilha.graph.stores.falkordb import FalkorDBStore

        store = FalkorDBStore.embedded(folder / "falkordb")
        return store, store.close
    from trilha.graph.stores.bolt import BoltGraphStore

    if args.backend == "bolt":
        if not args.url:
            raise ConfigurationError("--backend bolt needs --url")
        bolt = BoltGraphStore(args.url, args.user, args.password, args.database, timeout_s=600)
        return bolt, bolt.close
    from trilha.testing.arcadedb import ArcadeDBBoltServer

    server = ArcadeDBBoltServer(folder / "arcadedb", heap=args.heap)
    server.start()
    bolt = BoltGraphStore(server.url, server.user, server.password, server.database, timeout_s=600)

    def stop() -> None:
        bolt.close()
        server.stop()

    return bolt, stop


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry; prints the result as JSON."""
    parser = argparse.ArgumentParser(prog="python -m trilha.graph.bench")
    parser.add_argument("--backend", choices=("falkordb", "arcadedb", "bolt"), default="falkordb")
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=300_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--path-length", type=int, default=6, help="max_length of path()")
    parser.add_argument("--principal", help="read as this Principal (JSON); default anonymous")
    parser.add_argument("--heap", default="4g", help="JVM heap for --backend arcadedb")
    parser.add_argument("--url")
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--database")
    args = parser.parse_args(argv)
    try:
        principal = parse_principal(args.principal)
    except BadRequestError as e:
        parser.error(str(e))
    with tempfile.TemporaryDirectory(prefix="trilha-bench-") as tmp:
        store, stop = _store(args, Path(tmp))
        try:
            result = run_bench(
                store,
                args.entities,
                args.edges,
                n_queries=args.queries,
                seed=args.seed,
                batch_size=args.batch_size,
                backend=args.backend,
                path_length=args.path_length,
                principal=principal,
            )
        finally:
            stop()
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def bench_backends(
    backends: Sequence[str] = ("falkordb", "arcadedb"),
    entities: int = 100_000,
    edges: int = 300_000,
    n_queries: int = 50,
) -> dict[str, dict[str, Any]]:
    """:func:`run_bench` on each embedded backend (FalkorDB, ArcadeDB over Bolt), each in a
    temporary folder that is removed afterwards; a backend that fails is reported, not raised."""
    out: dict[str, dict[str, Any]] = {}
    for backend in backends:
        args = argparse.Namespace(
            backend=backend, heap="4g", url=None, user=None, password=None, database=None
        )
        with tempfile.TemporaryDirectory(prefix="trilha-bench-") as tmp:
            try:
                store, stop = _store(args, Path(tmp))
            except Exception as e:
                out[backend] = {"error": f"{type(e).__name__}: {e}"}
                continue
            try:
                out[backend] = run_bench(
                    store, entities, edges, n_queries=n_queries, backend=backend
                )
            except Exception as e:
                out[backend] = {"error": f"{type(e).__name__}: {e}"}
            finally:
                stop()
    return out
