"""``trilha prequery``: the Pre-query of a question (intent, focus, period, constraints), or the
accuracy of the classifier on a labelled JSONL file (``--eval``).

The LLM classifier runs when a Groq key is configured (``TRILHA_GROQ_API_KEY``) and ``--no-llm``
is not given; named graph nodes are looked for only with ``--workspace`` or ``--user``, among
those the user may see.
"""

from __future__ import annotations

import argparse
import json
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

from trilha.cli.options import (
    add_principal_options,
    add_workspace_options,
    open_workspace,
    principal_of,
    say,
    settings_of,
)
from trilha.errors import BadRequestError


def add_parser(sub: Any) -> None:
    """The ``prequery`` command and its options."""
    sp = sub.add_parser("prequery", help="intent, focus, time horizon of a question (pre-query)")
    sp.add_argument("text", nargs="?", help="the question")
    sp.add_argument("--eval", metavar="FILE", help="accuracy on a labelled JSONL file instead")
    sp.add_argument("--now", help="ISO date/time the question is asked at (default: now)")
    sp.add_argument("--no-llm", action="store_true", help="the heuristic only, even with a key")
    sp.add_argument("--json", action="store_true", help="print JSON")
    add_workspace_options(sp)
    add_principal_options(sp)
    sp.set_defaults(func=cmd_prequery)


def cmd_prequery(args: argparse.Namespace) -> int:
    """Classify one question, or evaluate a labelled file."""
    if (args.text is None) == (args.eval is None):
        raise BadRequestError("give the question TEXT or --eval FILE (one of them)")
    classifier = None if args.no_llm else _classifier(args)
    if args.eval is not None:
        return _evaluate(args, classifier)
    from trilha.orchestrate.prequery import prequery

    with ExitStack() as stack:
        finder = _finder(args, stack)
        outcome = prequery(args.text, now=_now(args), classifier=classifier, entities=finder)
    if args.json:
        payload = outcome.result.model_dump(mode="json")
        payload["trace"] = [
            e.model_dump(mode="json", exclude_none=True) for e in outcome.trace.stages
        ]
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print("\n".join(outcome_lines(outcome)))
    return 0


def _now(args: argparse.Namespace) -> datetime:
    if not args.now:
        return datetime.now().astimezone()
    try:
        return datetime.fromisoformat(args.now)
    except ValueError:
        raise BadRequestError(
            f"--now {args.now!r} is not an ISO date/time; give e.g. 2025-06-11T09:30:00-03:00"
        ) from None


def _classifier(args: argparse.Namespace) -> Any:
    """The Groq classifier when a key is configured, else None."""
    from trilha.llm.groq import groq_client
    from trilha.orchestrate.prequery import GroqClassifier

    settings = settings_of(args)
    client = groq_client(settings)
    if client is None:
        return None
    return GroqClassifier(client, settings.groq_model, settings.llm_timeout_s)


def _finder(args: argparse.Namespace, stack: ExitStack) -> Any:
    """A graph entity finder for ``--user`` over the workspace, when one is named."""
    if not (args.workspace or args.user or args.as_principal):
        return None
    from trilha.orchestrate.prequery import GraphEntityFinder

    ws = stack.enter_context(open_workspace(args, repair=False))
    if ws.graph is None:
        say(args, f"no graph in workspace {ws.path}: named nodes are not looked for")
        return None
    return GraphEntityFinder(ws.graph.store, principal_of(args, ws.path))


def _evaluate(args: argparse.Namespace, classifier: Any) -> int:
    """Accuracy per intent, of the horizon and overall, for the whole file and each split."""
    from trilha.orchestrate.prequery import prequery
    from trilha.orchestrate.prequery.evaluate import evaluate, load_labelled

    items = load_labelled(Path(args.eval), _now(args))

    def classify(text: str, now: datetime) -> Any:
        return prequery(text, now=now, classifier=classifier).result

    parts = {"all": items}
    for item in items:
        if item.split != "all":
            parts.setdefault(item.split, []).append(item)
    reports = {name: evaluate(part, classify) for name, part in parts.items()}
    if args.json:
        out = {name: r.model_dump(mode="json") for name, r in reports.items()}
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        used = "llm (heuristic fallback)" if classifier is not None else "heuristic"
        print(f"classifier: {used}; {len(items)} questions")
        for name, report in reports.items():
            print("\n".join(accuracy_lines(name, report)))
    return 0


def outcome_lines(outcome: Any) -> list[str]:
    """A Pre-query outcome as human-readable lines."""
    r = outcome.result
    focus = [f"{e.node_id} ({e.label})" if e.node_id else e.label for e in r.focus_entities]
    h, work = r.time_horizon, r.work
    period = h.name if h.start is None else f"{h.name} ({h.start} .. {h.end})"
    hints = [f"overdue: {work.overdue}", f"ownership: {work.ownership}"]
    hints += [f"priority: {work.priority}", f"statuses: {', '.join(work.statuses) or '-'}"]
    lines = [
        f"intent: {r.retrieval_intent} ({r.classifier}, confidence {r.confidence:.2f})",
        f"focus: {', '.join(focus) or '-'}",
        f"time horizon: {period}",
        f"answer: {r.answer_constraints.length}, language {r.answer_constraints.language}",
        f"work: {'; '.join(hints)}",
        f"keywords: {', '.join(r.keywords) or '-'}",
    ]
    steps = outcome.trace.stages
    return lines + [f"trace: {e.name} {e.latency_ms:.1f} ms: {e.note}" for e in steps]


def accuracy_lines(name: str, report: Any) -> list[str]:
    """One part's accuracy as aligned lines."""

    def row(label: str, acc: Any) -> str:
        return f"  {label:<16} {acc.value:6.3f}  ({acc.correct}/{acc.total})"

    lines = [f"[{name}]", row("overall", report.overall)]
    lines += [row(intent, acc) for intent, acc in report.per_intent.items()]
    return [*lines, row("time horizon", report.horizon)]
