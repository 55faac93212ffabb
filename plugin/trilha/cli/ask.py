"""``trilha ask``: a short answer whose every sentence cites a unit (UC09, seed 002)."""

from __future__ import annotations

import argparse
from typing import Any

from trilha.cli.options import (
    add_principal_options,
    add_workspace_options,
    open_workspace,
    principal_of,
)
from trilha.cli.query import add_filter_options, add_rerank_options, filters_of
from trilha.errors import BadRequestError
from trilha.types import checked_text


def add_parser(sub: Any) -> None:
    """The ``ask`` command and its options."""
    sp = sub.add_parser(
        "ask",
        help="a short answer with citations (parse, retrieve, rerank, answer)",
        description="Answer a question from the workspace: at most 8 lines, every sentence "
        "citing the unit it rests on; extractive offline, a Groq model when "
        "TRILHA_GROQ_API_KEY is set (TRILHA_ANSWER_BACKEND). Personal data is masked.",
    )
    add_workspace_options(sp)
    sp.add_argument("question", help="the question")
    sp.add_argument("-k", type=int, default=40, help="candidates retrieved (default 40)")
    sp.add_argument("--top-n", type=int, default=12, help="candidates kept after rerank (def. 12)")
    sp.add_argument(
        "--max-tokens-ctx", type=int, default=2000, help="token budget of the context (def. 2000)"
    )
    sp.add_argument("--project", dest="project_id", help="the project asked about (in the trace)")
    sp.add_argument(
        "--backend",
        dest="answer_backend",
        choices=("auto", "extractive", "llm"),
        help="who composes: extractive, llm (Groq) or auto (default: TRILHA_ANSWER_BACKEND)",
    )
    add_rerank_options(sp)
    add_filter_options(sp)
    add_principal_options(sp)
    sp.add_argument("--json", action="store_true", help="print the answer as JSON")
    sp.set_defaults(func=cmd_ask)


def cmd_ask(args: argparse.Namespace) -> int:
    """Answer the question; a question the workflow cannot answer prints why (exit 0). A blank
    or over-long question is bad input (exit 2), as it is for ``query`` and ``context``."""
    from trilha.answer import ask
    from trilha.cli.render import render_answer

    checked_text(args.question)
    with open_workspace(args, search=True) as ws:
        if len(ws) == 0:
            raise BadRequestError(
                f"workspace {ws.path} is empty; run `trilha ingest PATH -w {ws.path}` first"
            )
        answer = ask(
            ws,
            args.question,
            k=args.k,
            top_n=args.top_n,
            rerank=args.rerank,
            max_tokens_ctx=args.max_tokens_ctx,
            project_id=args.project_id,
            filters=filters_of(args),
            principal=principal_of(args, ws.path),
        )
    print(answer.model_dump_json(indent=2) if args.json else render_answer(answer))
    return 0
