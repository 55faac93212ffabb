"""``trilha dual-search``: facts and thesis searched separately, with the divergence report."""

from __future__ import annotations

import argparse
from typing import Any

from trilha.cli.options import (
    add_principal_options,
    add_workspace_options,
    open_workspace,
    principal_of,
)
from trilha.cli.query import add_filter_options, filters_of


def add_parser(sub: Any) -> None:
    """The ``dual-search`` command and its options."""
    sp = sub.add_parser(
        "dual-search",
        help="search a case's facts and its legal thesis separately; report how they diverge",
    )
    add_workspace_options(sp)
    sp.add_argument("--facts", required=True, help="the facts of the case")
    sp.add_argument("--thesis", required=True, help="the legal thesis")
    sp.add_argument("-k", type=int, default=10, help="units per list (default 10)")
    add_filter_options(sp)
    add_principal_options(sp)
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.set_defaults(func=cmd_dual)


def cmd_dual(args: argparse.Namespace) -> int:
    """Run the dual search and print the report."""
    from trilha.cli.render import printable
    from trilha.retrieve.dual import dual_search

    with open_workspace(args) as ws:
        result = dual_search(
            ws,
            args.facts,
            args.thesis,
            top_k=args.k,
            filters=filters_of(args),
            principal=principal_of(args, ws.path),
        )
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    lines = [", ".join(f"{n} {c}" for c, n in result.counts.items())]
    for h in result.hits:
        lines.append(
            f"{h.category:<11} facts {h.fact_score:.3f} (#{h.fact_rank or '-'}) · thesis "
            f"{h.thesis_score:.3f} (#{h.thesis_rank or '-'})  {h.unit.unit_id}"
        )
    print(printable("\n".join(lines)))
    return 0
