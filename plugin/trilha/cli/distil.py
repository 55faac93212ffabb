"""``trilha distil``: teach a smaller cross-encoder the answer path's reranking."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from trilha.cli.options import add_workspace_options, open_workspace, say
from trilha.errors import BadRequestError, requires_extra


def add_parser(sub: Any) -> None:
    """The ``distil`` command and its options."""
    sp = sub.add_parser(
        "distil",
        help="teach a smaller cross-encoder the teacher's scores on the windows ask reranks",
        description="Runs each question through ask's retrieval and window choice, scores the "
        "(question, window) pairs with the teacher, and trains a copy of the teacher that keeps "
        "--layers of its layers to give the same scores. Use the result with --reranker OUT.",
    )
    add_workspace_options(sp)
    sp.add_argument("--teacher", required=True, help="cross-encoder folder (or hub id) to copy")
    sp.add_argument("--out", required=True, help="folder to write the student into")
    sp.add_argument(
        "--questions",
        required=True,
        help="questions: a text file (one per line), a JSONL file with a 'text' field, or a "
        "BEIR folder (its queries of --split)",
    )
    sp.add_argument("--split", default="train", help="qrels split of a BEIR folder (default train)")
    sp.add_argument("--layers", type=int, default=4, help="layers the student keeps (default 4)")
    sp.add_argument(
        "--epochs", type=float, default=1.0, help="passes over the questions (default 1)"
    )
    sp.add_argument(
        "--learning-rate",
        type=float,
        default=5e-5,
        help="AdamW's rate before warm-up and linear decay (default 5e-5)",
    )
    sp.add_argument("--max-questions", type=int, help="use at most this many questions")
    sp.add_argument(
        "--held-out",
        type=float,
        default=0.1,
        help="share of the questions kept aside to measure agreement (default 0.1)",
    )
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.set_defaults(func=cmd_distil)


def read_questions(path: Path, split: str) -> list[str]:
    """The questions in ``path``: a BEIR folder's ``split`` queries, a JSONL file's ``text``
    fields, or a text file's non-empty lines."""
    if path.is_dir():
        from trilha.eval.beir import load_beir

        return _distinct([q.text for q in load_beir(path, split).queries])
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError) as e:
        raise BadRequestError(f"cannot read questions from {path}: {e}") from None
    lines = [line for line in lines if line]
    if path.suffix != ".jsonl":
        return _distinct(lines)
    questions = []
    for number, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except ValueError:
            raise BadRequestError(f"{path}:{number}: not a JSON object") from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise BadRequestError(f"{path}:{number}: no 'text' field with the question")
        questions.append(row["text"])
    return _distinct(questions)


def _distinct(questions: list[str]) -> list[str]:
    """Each question once (spacing and case aside), in order: a repeat would sit on both
    sides of the held-out split and flatter the agreement."""
    seen: dict[str, str] = {}
    for question in questions:
        seen.setdefault(" ".join(question.split()).casefold(), question)
    return list(seen.values())


def _check(args: argparse.Namespace) -> None:
    if args.epochs <= 0:
        raise BadRequestError("--epochs must be positive")
    if not 0 < args.learning_rate < 1:
        raise BadRequestError("--learning-rate must be above 0 and below 1")
    if not 0 <= args.held_out < 1:
        raise BadRequestError("--held-out must be at least 0 and below 1")
    if args.max_questions is not None and args.max_questions < 2:
        raise BadRequestError("--max-questions must be at least 2")
    if not Path(args.questions).exists():
        raise BadRequestError(f"--questions {args.questions} does not exist")


def cmd_distil(args: argparse.Namespace) -> int:
    """Collect the pairs, teach, train, save, report agreement before and after."""
    with requires_extra("torch", "trilha distil"):
        import torch  # noqa: F401  (the student is trained with it)
        import transformers  # noqa: F401
    from trilha.answer.distil import DistilRequest, run_distil

    _check(args)
    questions = read_questions(Path(args.questions), args.split)[: args.max_questions]
    if len(questions) < 2:
        raise BadRequestError(
            f"{args.questions}: need at least 2 questions, found {len(questions)}"
        )
    request = DistilRequest(
        teacher=args.teacher,
        out=Path(args.out),
        layers=args.layers,
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        held_out=args.held_out,
    )
    with open_workspace(args) as ws:
        report = run_distil(ws, questions, request, progress=None if args.quiet else say_to(args))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"student: {report['out']} ({report['layers']} of {report['teacher_layers']} layers)")
    for name in ("copied", "trained"):
        a = report["agreement"][name]
        print(
            f"agreement with the teacher on {report['agreement_on']}, {name}: top-"
            f"{report['top_n']} overlap {a['top_overlap']}, Spearman {a['spearman']}, "
            f"MSE {a['mse']}"
        )
    print(f"use it: trilha ask --reranker {report['out']} ...")
    return 0


def say_to(args: argparse.Namespace) -> Any:
    return lambda line: say(args, line)
