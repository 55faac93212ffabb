"""``trilha features``: structured search over the fields extracted per decision (seed 001)."""

from __future__ import annotations

import argparse
from typing import Any

from trilha.cli.options import (
    add_principal_options,
    add_workspace_options,
    open_workspace,
    principal_of,
)

_TEXT = ("dispositivo_norma", "resultado", "tipo_decisao", "tipo_recurso", "ministro_relator",
         "argumento_vencedor", "argumento_perdedor")  # fmt: skip


def add_parser(sub: Any) -> None:
    """The ``features`` command and its options."""
    sp = sub.add_parser(
        "features", help="documents whose extracted fields match (categorias, resultado, …)"
    )
    add_workspace_options(sp)
    sp.add_argument("--categorias", help="comma-separated; any of them")
    for name in _TEXT:
        how = "partial, case-insensitive" if name.startswith("argumento") else "exact"
        sp.add_argument(f"--{name.replace('_', '-')}", dest=name, help=how)
    sp.add_argument("--unanimidade", choices=("true", "false"), help="unanimous or not")
    sp.add_argument("--limit", type=int, default=50, help="documents shown (default 50)")
    add_principal_options(sp)
    sp.add_argument("--json", action="store_true", help="print the result as JSON")
    sp.set_defaults(func=cmd_features)


def cmd_features(args: argparse.Namespace) -> int:
    """Run the feature search and print the documents."""
    from trilha.cli.render import printable
    from trilha.retrieve.features import feature_search

    filters: dict[str, Any] = {n: getattr(args, n) for n in _TEXT if getattr(args, n)}
    if args.categorias:
        filters["categorias"] = [c.strip() for c in args.categorias.split(",") if c.strip()]
    if args.unanimidade:
        filters["unanimidade"] = args.unanimidade == "true"
    with open_workspace(args) as ws:
        result = feature_search(ws, filters, principal_of(args, ws.path), args.limit)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    lines = [f"{result.total} document(s)"]
    for d in result.documents:
        lines.append(f"{d.date or '-':<10}  {d.doc_id}  {d.title or ''}")
        lines += [f"    {k}: {v}" for k, v in d.features.items()]
    print(printable("\n".join(lines)))
    return 0
