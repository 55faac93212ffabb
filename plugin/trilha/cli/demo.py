"""``trilha demo``: the packaged sample corpus, three questions, one question as four users, and
seed 004's three user stories through the orchestrator (:mod:`trilha.cli.demo_stories`)."""

from __future__ import annotations

import argparse
from typing import Any

from trilha.cli.demo_stories import tell_stories
from trilha.cli.options import add_workspace_options, open_workspace

DEMO_QUESTIONS = (
    "Quais são os requisitos para trabalhar remotamente?",
    "What is the deadline to report a security incident?",
    "Qual o prazo prescricional para cobrança de dívida?",
)
#: Who asks the demo's questions (a user of the sample principals.yaml).
DEMO_USER = "maria.cfo"
#: The demo's visibility question, asked by each of these (None: anonymous).
DEMO_VISIBILITY = (
    "Quais são os requisitos para o trabalho remoto?",
    (None, "maria.cfo", "bruno.ti", "carla.beta"),
)


def add_parser(sub: Any) -> None:
    """The ``demo`` command and its options."""
    sp = sub.add_parser(
        "demo",
        help="index the sample corpus; ask questions, one as four users, and the orchestrator's "
        "stories",
    )
    add_workspace_options(sp)
    sp.add_argument("-k", type=int, default=3, help="results per question (default 3)")
    sp.add_argument("--reranker", help="optional cross-encoder id or local path")
    sp.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    """Ingest the packaged sample corpus, ask three questions as one user, then one question as
    four users (anonymous included) to show that each sees only what they may, then tell seed
    004's user stories through the orchestrator."""
    with open_workspace(args, create=True) as ws:
        _load_samples(ws)
        _ask_as_one_user(ws, args.k, rerank=bool(args.reranker))
        _ask_as_four_users(ws, args.k)
        print()
        tell_stories(ws)
    return 0


def _load_samples(ws: Any) -> None:
    """Index the sample corpus (and its graph records), copy its principals.yaml if absent."""
    from trilha.samples import load_samples

    report = load_samples(ws)
    print(
        f"sample corpus: {report.docs_added + report.docs_updated} documents indexed, "
        f"{report.docs_unchanged} unchanged; {len(ws)} units in {ws.path}\n"
    )


def _ask_as_one_user(ws: Any, k: int, rerank: bool) -> None:
    from trilha.access.directory import find_principal
    from trilha.cli.render import render_result

    asker = find_principal(ws.path, DEMO_USER)
    for question in DEMO_QUESTIONS:
        print(f"Q ({DEMO_USER}): {question}")
        result = ws.search(question, top_k=k, rerank=rerank, principal=asker)
        print(render_result(result) + "\n")


def _ask_as_four_users(ws: Any, k: int) -> None:
    from trilha.access.directory import PRINCIPALS_FILE, find_principal

    question, users = DEMO_VISIBILITY
    print(f"Same question, four users (users are in {ws.path / PRINCIPALS_FILE}): {question}")
    for user in users:
        who = None if user is None else find_principal(ws.path, user)
        hits = ws.search(question, top_k=max(k, 3), principal=who).hits
        docs = list(dict.fromkeys(h.unit.doc_id for h in hits))
        print(f"  {user or 'anonymous':<11} -> {', '.join(docs) or '(nothing visible)'}")
