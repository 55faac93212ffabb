"""``trilha tune``: fit the workspace's BM25 k1 and b and fusion on a BEIR split's qrels."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from trilha.cli.options import add_lang_option, add_workspace_options, settings_of
from trilha.cli.render import table_text
from trilha.errors import BadRequestError, requires_extra
from trilha.index.language import written_code


def add_parser(sub: Any) -> None:
    """The ``tune`` command and its options."""
    sp = sub.add_parser(
        "tune",
        help="fit BM25's k1 and b, fusion weights, merge, RRF k and side depths on a BEIR "
        "split; write them to the workspace",
    )
    add_workspace_options(sp)
    sp.add_argument("--data", required=True, help="BEIR folder (corpus, queries, qrels/SPLIT.tsv)")
    sp.add_argument("--split", default="train", help="qrels split to fit on (default train)")
    add_lang_option(sp, "corpus documents")
    sp.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    sp.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    sp.add_argument("--out", help="also write the report as JSON to this file")
    sp.set_defaults(func=cmd_tune)


def cmd_tune(args: argparse.Namespace) -> int:
    """Fit, report the held-out gain per stage, write the workspace's fusion.yaml."""
    with requires_extra("eval", "trilha tune"):
        import pytrec_eval  # noqa: F401  (the nDCG it fits on)
    from trilha.tune.run import run_tune

    if args.folds < 2:
        raise BadRequestError("--folds must be at least 2 (cross-validation needs two folds)")
    settings = settings_of(args)
    report = run_tune(
        Path(args.data),
        settings.workspace,
        args.split,
        lang=written_code(args.lang) if args.lang else None,
        folds=args.folds,
        write=not args.dry_run,
        progress=not args.quiet,
        settings=settings,
    )
    rows = {
        f"{name} (top-{stage['top_k']})": {
            "untuned": stage["train_ndcg@10"]["untuned"],
            "tuned": stage["train_ndcg@10"]["tuned"],
            "gain": stage["heldout_gain"],
        }
        for name, stage in report["stages"].items()
    }
    print(f"{report['dataset']} ({report['split']}, {report['queries']} queries, {report['lang']})")
    print(table_text(rows, ("untuned", "tuned", "gain")))
    print(f"nDCG@10 on the training queries; gain: mean over {args.folds} held-out folds")
    print("tuned: " + ", ".join(f"{k}={v}" for k, v in report["tuned"].items()))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {report['written']}" if report["written"] else "dry run: nothing written")
    return 0
