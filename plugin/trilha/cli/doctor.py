"""``trilha doctor``: do the unit store, dense index and graph hold the same units?"""

from __future__ import annotations

import argparse
import json
from typing import Any

from trilha.cli.options import add_workspace_options, open_workspace


def add_parser(sub: Any) -> None:
    """The ``doctor`` command and its options."""
    sp = sub.add_parser(
        "doctor", help="check that the unit store, dense index and graph hold the same units"
    )
    add_workspace_options(sp)
    sp.add_argument(
        "--repair",
        action="store_true",
        help="remove orphans, restore missing units, finish interrupted records ingests",
    )
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Compare the id sets of the three indices; repair with --repair. Exit 0 when equal."""
    with open_workspace(args, repair=False) as ws:
        found = ws.check()
        after = None
        if args.repair and not found.consistent:
            ws.repair(progress=not (args.quiet or args.json))
            after = ws.check()
        if args.json:
            data = {"before": found.model_dump(), "consistent": found.consistent}
            if after is not None:
                data.update(after=after.model_dump(), repaired=after.consistent)
            print(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            print("\n".join(found.lines()))
            if after is not None:
                print(
                    "after repair: "
                    + ("consistent" if after.consistent else "\n".join(after.lines()))
                )
    final = after if after is not None else found
    return 0 if final.consistent else 1
