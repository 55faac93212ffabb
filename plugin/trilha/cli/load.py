"""``trilha load``: the HTTP service under concurrent clients, and its overhead over Python.

It times ``Workspace.search`` in this process for the demo's questions, starts ``trilha serve``
over the workspace (a key for ``--user``), times the same searches over HTTP one at a time (the
service's own overhead), then runs ``--clients`` concurrent clients for ``--duration`` seconds
of mixed ``/v1/retrieve``, ``/v1/context`` and ``/graphrag/*`` calls, optionally killing the
embedded graph server ``--kill-graph-at`` seconds in. The result cache is off unless ``--cache``
(repeated questions would otherwise be cache hits). Prints the numbers and writes them as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from trilha.cli.options import add_workspace_options, say, settings_of
from trilha.errors import BadRequestError, requires_extra

#: Rounds of the demo's questions timed one at a time, in Python and over HTTP.
ROUNDS = 5
#: Entity names the graph calls ask about (the demo's; unknown names are answered too).
ENTITIES = ("LGPD", "SOC", "VPN", "STJ", "Atlas", "ANPD")


def add_parser(sub: Any) -> None:
    """The ``load`` command and its options."""
    sp = sub.add_parser(
        "load",
        help="load-test the HTTP service on loopback: P50/P95/P99, errors, overhead over Python",
    )
    add_workspace_options(sp)
    sp.add_argument("--user", help="who the clients' key reads as (principals.yaml; default: "
                                   "an inline user who sees public items)")  # fmt: skip
    sp.add_argument("--clients", type=int, default=50, help="concurrent clients (default 50)")
    sp.add_argument("--duration", type=float, default=120.0, help="seconds (default 120)")
    sp.add_argument(
        "--think-ms", type=float, default=0.0, help="mean pause between a client's calls (def. 0)"
    )
    sp.add_argument("--kill-graph-at", type=float, help="kill the graph server after S seconds")
    sp.add_argument("--cache", action="store_true", help="keep the result cache on")
    sp.add_argument("--out", type=Path, help="write the report as JSON")
    sp.set_defaults(func=cmd_load)


def _questions() -> list[str]:
    from importlib.resources import files

    data = yaml.safe_load((files("trilha.samples") / "questions.yaml").read_text("utf-8"))
    return [q["question"] for q in data["questions"]]


def _python_p50(ws: Any, questions: list[str], principal: Any) -> float:
    for q in questions:  # warm-up
        ws.search(q, top_k=10, principal=principal)
    times = []
    for _ in range(ROUNDS):
        for q in questions:
            start = time.perf_counter()
            ws.search(q, top_k=10, principal=principal)
            times.append((time.perf_counter() - start) * 1000)
    return float(np.percentile(times, 50))


def _http_p50(url: str, key: str, questions: list[str]) -> tuple[float, float]:
    """P50 of ``/v1/retrieve`` one call at a time as the client sees it, and P50 of what each
    call spent outside its Python call (its ``Server-Timing``): HTTP, JSON, auth, routing."""
    import httpx

    times, outside = [], []
    with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=60) as http:
        for q in questions:  # warm-up
            http.post("/v1/retrieve", json={"query": q, "top_k": 10}).raise_for_status()
        for _ in range(ROUNDS):
            for q in questions:
                start = time.perf_counter()
                response = http.post("/v1/retrieve", json={"query": q, "top_k": 10})
                ms = (time.perf_counter() - start) * 1000
                response.raise_for_status()
                call = response.headers.get("server-timing", "").partition("dur=")[2]
                times.append(ms)
                outside.append(ms - float(call or 0.0))
    return float(np.percentile(times, 50)), float(np.percentile(outside, 50))


def _prepare(args: argparse.Namespace, settings: Any) -> dict[str, Any]:
    """Time the Python calls and gather the calls' material, with the workspace open here."""
    from trilha.access.directory import find_principal
    from trilha.access.principal import Principal
    from trilha.workspace import Workspace

    questions = _questions()
    with Workspace.open(settings=settings, create=False) as ws:
        principal = (
            Principal(user_id="load") if args.user is None else find_principal(ws.path, args.user)
        )
        units = ws.searcher.lexical.units
        docs = sorted({u.doc_id for u in units})[:8]
        python_p50 = _python_p50(ws, questions, principal)
    return {"questions": questions, "docs": docs, "entities": list(ENTITIES),
            "principal": principal, "python_p50": python_p50}  # fmt: skip


def _service_file(folder: Path, workspace: Path, principal: Any, key: str) -> Path:
    entry = {"key": key, "tenant": "load",
             "principal": principal.model_dump(exclude_defaults=True)}  # fmt: skip
    config = {"projects": {"load": {"workspace": str(workspace), "tenant": "load"}},
              "keys": [entry]}  # fmt: skip
    path = folder / "service.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _killer(workspace: Path) -> Any:
    from trilha.graph.stores.falkordb_folder import read_record

    def kill() -> None:
        record = read_record(workspace / "graph")
        if record is not None:
            os.kill(record.pid, signal.SIGKILL)

    return kill


def cmd_load(args: argparse.Namespace) -> int:
    """Measure, print and write the report."""
    with requires_extra("server", "trilha load"):
        import fastapi  # noqa: F401  (it loads the service `trilha serve` runs)
        import uvicorn  # noqa: F401
    from trilha.eval.load import demo_calls

    if args.clients < 1 or args.duration <= 0 or args.think_ms < 0:
        raise BadRequestError("--clients must be ≥ 1, --duration > 0 and --think-ms ≥ 0")
    settings = settings_of(args)
    env = {} if args.cache else {"TRILHA_RESULT_CACHE_TTL_S": "0"}
    if not args.cache:
        settings = settings.model_copy(update={"result_cache_ttl_s": 0.0})
    material = _prepare(args, settings)
    key = secrets.token_hex(16)
    calls = demo_calls(material["questions"], material["docs"], material["entities"])
    workspace = settings.workspace.expanduser().resolve()
    with tempfile.TemporaryDirectory() as tmp:
        service = _service_file(Path(tmp), workspace, material["principal"], key)
        out = _measure(args, service, env, key, calls, material["questions"], workspace)
    out["overhead"]["python_p50_ms"] = round(material["python_p50"], 2)
    out["overhead"]["overhead_p50_ms"] = round(
        out["overhead"]["http_p50_ms"] - material["python_p50"], 2
    )
    out["cache"] = bool(args.cache)
    _print(out)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2), encoding="utf-8")
        say(args, f"wrote {args.out}")
    return 0


def _measure(
    args: argparse.Namespace, service: Path, env: dict[str, str], key: str,
    calls: dict[str, Any], questions: list[str], workspace: Path,
) -> dict[str, Any]:  # fmt: skip
    """Start the service, time it one call at a time, then under the clients."""
    from trilha.eval.load import report, run_load
    from trilha.eval.served import served

    with served(service, env) as url:
        http_p50, outside_p50 = _http_p50(url, key, questions)
        kill = (args.kill_graph_at, _killer(workspace)) if args.kill_graph_at else None
        samples = asyncio.run(run_load(url, {"X-API-Key": key}, calls, args.clients,
                                       args.duration, kill, args.think_ms / 1000))  # fmt: skip
    out = report(samples, args.duration, args.clients, args.kill_graph_at)
    out["think_ms"] = args.think_ms
    out["overhead"] = {"http_p50_ms": round(http_p50, 2), "service_p50_ms": round(outside_p50, 2)}
    return out


def _print(out: dict[str, Any]) -> None:
    o = out["overhead"]
    print(f"{out['clients']} clients (think {out['think_ms']:.0f} ms), {out['duration_s']:.0f} s: "
          f"{out['requests']} requests "
          f"({out['throughput_rps']} /s), {out['errors']} errors")  # fmt: skip
    for name, s in [("overall", out["overall"]), *out["routes"].items()]:
        if s["count"]:
            print(f"  {name:<26} n={s['count']:<6} P50 {s['p50_ms']:>8.1f}  P95 {s['p95_ms']:>8.1f}"
                  f"  P99 {s['p99_ms']:>8.1f} ms  statuses {s['statuses']}")  # fmt: skip
    first, last = out["first_window"], out["last_window"]
    if first["count"] and last["count"]:
        print(f"  P95 first 30 s {first['p95_ms']:.1f} ms, last 30 s {last['p95_ms']:.1f} ms")
    print(f"  /v1/retrieve one at a time: Python P50 {o['python_p50_ms']} ms (in this process), "
          f"HTTP P50 {o['http_p50_ms']} ms, of which outside the Python call "
          f"{o['service_p50_ms']} ms")  # fmt: skip
