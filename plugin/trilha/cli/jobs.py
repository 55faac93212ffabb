"""``trilha jobs stats``: what the retrieval job log says (seed 004 REQ-RETR-017, 020).

It opens only ``<workspace>/memory.sqlite``: no index, no model, no graph.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trilha.cli.options import add_workspace_options, say, settings_of
from trilha.errors import BadRequestError

if TYPE_CHECKING:
    from trilha.memory.jobs import JobStats


def add_parser(sub: Any) -> None:
    """The ``jobs`` command and its ``stats`` subcommand."""
    sp = sub.add_parser("jobs", help="the retrieval job log: success rate, latency, patterns")
    jsub = sp.add_subparsers(dest="jobs_command", required=True, metavar="JOBS_COMMAND")
    g = jsub.add_parser(
        "stats", help="success rate, mean and P95 latency, errors by strategy, recurring queries"
    )
    add_workspace_options(g)
    g.add_argument("--json", action="store_true", help="print the statistics as JSON")
    g.add_argument(
        "--since", help="only jobs from this ISO date or time on (UTC unless it names a zone)"
    )
    sp.set_defaults(func=cmd_jobs)


def parse_since(text: str | None) -> datetime | None:
    """``--since`` as an aware datetime (a date or a time without zone is taken as UTC)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadRequestError(
            f"--since {text!r} is not an ISO date or time; write e.g. 2025-06-01 or "
            "2025-06-01T09:00Z"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def stats_lines(stats: JobStats, since: datetime | None) -> list[str]:
    """The human-readable report of a :class:`~trilha.memory.jobs.JobStats`."""
    failed = sum(stats.errors_by_strategy.values())
    window = f" since {since.isoformat()}" if since else ""
    lines = [
        f"retrieval jobs{window}: {stats.jobs}",
        f"success rate: {stats.success_rate:.1%} ({stats.jobs - failed} ok, {failed} failed)",
        f"latency: mean {stats.mean_latency_ms:.1f} ms, P95 {stats.p95_latency_ms} ms",
        "by strategy: "
        + ", ".join(
            f"{name} {n} ({stats.errors_by_strategy.get(name, 0)} failed)"
            for name, n in stats.by_strategy.items()
        ),
        "by intent: " + ", ".join(f"{name} {n}" for name, n in stats.by_intent.items()),
    ]
    if not stats.recurring_patterns:
        return [*lines, "recurring query patterns: none (no query pattern came back twice)"]
    lines.append("recurring query patterns:")
    lines += [
        f"  {p.count}x by {p.users} user(s) [{p.pattern}] e.g. {p.example!r}"
        for p in stats.recurring_patterns
    ]
    return lines


def cmd_jobs(args: argparse.Namespace) -> int:
    """Print the job log's statistics; an empty or missing log says so (on stderr with
    ``--json``, which still prints the empty statistics), exit 0."""
    from trilha.index.sql_store import on_server, shown
    from trilha.memory.jobs import JobLog, job_stats
    from trilha.memory.store import memory_at

    since = parse_since(args.since)
    settings = settings_of(args)
    path = memory_at(settings.workspace, settings.store_url)
    stats = job_stats([])
    if on_server(path) or Path(path).is_file():
        log = JobLog(path)
        try:
            stats = log.stats(since=since)
        finally:
            log.close()
    if args.json:
        print(json.dumps(stats.model_dump(mode="json"), ensure_ascii=False, indent=2))
    if stats.jobs == 0:
        window = f" since {since.isoformat()}" if since else ""
        say(args, f"no retrieval jobs recorded in {shown(path)}{window}")
    elif not args.json:
        print("\n".join(stats_lines(stats, since)))
    return 0
