"""``trilha info``: what a workspace holds and how it searches (the fusion in force)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from trilha.cli.options import add_workspace_options, open_workspace


def add_parser(sub: Any) -> None:
    """The ``info`` command and its options."""
    sp = sub.add_parser(
        "info", help="units, languages, encoder, graph and the fusion in force per language"
    )
    add_workspace_options(sp)
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.set_defaults(func=cmd_info)


def workspace_info(ws: Any) -> dict[str, Any]:
    """The report :func:`cmd_info` prints."""
    lexical = ws.searcher.lexical
    langs = Counter(u.lang for u in lexical.units)
    fusion = {}
    # an operator's report on the whole workspace: hidden units' languages included
    for lang in dict.fromkeys([*lexical.unit_langs, *ws.fusion.languages()]):
        values, origin = ws.fusion.resolve(lang)
        fusion[lang] = {k: {"value": v, "from": origin[k]} for k, v in values.model_dump().items()}
    return {
        "workspace": str(ws.path),
        "units": len(lexical.units),
        "documents": len({u.doc_id for u in lexical.units}),
        "languages": dict(langs.most_common()),
        "embedding_model": ws.embedder.model_id,
        "graph": "off" if ws.graph is None else ws.settings.graph_backend,
        "fusion": fusion,
    }


def cmd_info(args: argparse.Namespace) -> int:
    """Print the workspace's report."""
    with open_workspace(args) as ws:
        info = workspace_info(ws)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return 0
    for key in ("workspace", "units", "documents", "languages", "embedding_model", "graph"):
        print(f"{key}: {info[key]}")
    for lang, values in info["fusion"].items():
        print(f"fusion [{lang}]:")
        for name, v in values.items():
            print(f"  {name} = {v['value']}  ({v['from']})")
    return 0
