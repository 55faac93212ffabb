"""``trilha query``: hybrid search with filters, merge mode, rerank and a principal."""

from __future__ import annotations

import argparse
import json
from typing import Any

from trilha.cli.options import (
    add_principal_options,
    add_workspace_options,
    open_workspace,
    principal_of,
)
from trilha.errors import BadRequestError


def add_parser(sub: Any) -> None:
    """The ``query`` command and its options."""
    sp = sub.add_parser("query", help="hybrid search with filters, merge mode and rerank")
    add_workspace_options(sp)
    sp.add_argument("query", help="the question")
    sp.add_argument("-k", type=int, default=None, help="results (default 10; 12 with --rerank)")
    sp.add_argument("--merge", choices=("weighted", "rrf"), help="merge mode (default weighted)")
    sp.add_argument("--candidates", type=int, help="pool before rerank (default 40)")
    sp.add_argument(
        "--expand",
        action="store_true",
        help="also search up to 3 variants of the query (TRILHA_EXPANSION_BACKEND)",
    )
    add_rerank_options(sp)
    add_filter_options(sp)
    add_principal_options(sp)
    sp.add_argument("--json", action="store_true", help="print the result as JSON")
    sp.set_defaults(func=cmd_query)


def add_rerank_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--rerank", action="store_true", help="rerank with the cross-encoder")
    sp.add_argument("--reranker", help="cross-encoder id or local path (TRILHA_RERANKER_MODEL)")
    sp.add_argument(
        "--rerank-backend", choices=("auto", "torch", "onnx"), help="backend (default auto)"
    )
    sp.add_argument(
        "--rerank-precision",
        choices=("auto", "fp32", "bf16", "int8"),
        help="precision (default auto)",
    )


def add_filter_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--tags", help="comma-separated; a unit matches any of them")
    sp.add_argument("--lang", help="language code: pt (also finds pt-BR, pt-PT), pt-BR alone")
    sp.add_argument("--setor", help="sector")
    sp.add_argument("--tema", help="theme")
    sp.add_argument("--ministro", help="judge (case-insensitive)")
    sp.add_argument("--resultado", help="decision outcome")
    sp.add_argument("--tipos-recurso", help="comma-separated appeal types")
    sp.add_argument("--date-from", help="earliest date, YYYY-MM-DD or YYYYMMDD")
    sp.add_argument("--date-to", help="latest date, YYYY-MM-DD or YYYYMMDD")
    sp.add_argument("--max-sensitivity", type=int, help="exclude units above this level")
    sp.add_argument("--filters", dest="filters_json", help="filter fields as a JSON object")


def filters_of(args: argparse.Namespace) -> dict[str, Any] | None:
    """The filter fields of the options (``--filters`` JSON last, over the others)."""
    f: dict[str, Any] = {}
    if args.tags is not None:  # --tags "" is an empty list, refused with a clear line
        f["tags"] = [t.strip() for t in args.tags.split(",") if t.strip()]
    for name in ("lang", "setor", "tema", "ministro", "resultado"):
        value = getattr(args, name)
        if value is not None and not value.strip() and name != "lang":  # lang: its own line
            raise BadRequestError(f"--{name} is empty; give a value or leave the option out")
        if value:
            f[name] = value
    if args.date_from is not None:  # an empty date is refused by the filters
        f["data_inicio"] = args.date_from
    if args.date_to is not None:
        f["data_fim"] = args.date_to
    if args.tipos_recurso is not None:  # as --tags: an empty list is refused
        f["tipos_recurso"] = [t.strip() for t in args.tipos_recurso.split(",") if t.strip()]
    if args.max_sensitivity is not None:
        f["max_sensitivity"] = args.max_sensitivity
    if args.filters_json:
        f.update(_json_filters(args.filters_json))
    return f or None


def _json_filters(text: str) -> dict[str, Any]:
    try:
        extra = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadRequestError(f"--filters is not valid JSON: {e.msg}") from e
    if not isinstance(extra, dict):
        raise BadRequestError("--filters must be a JSON object of filter fields")
    return extra


def cmd_query(args: argparse.Namespace) -> int:
    """Search the workspace."""
    with open_workspace(args, search=True) as ws:
        if len(ws) == 0:
            raise BadRequestError(
                f"workspace {ws.path} is empty; run `trilha ingest PATH -w {ws.path}` first"
            )
        result = ws.search(
            args.query,
            top_k=args.k,
            filters=filters_of(args),
            merge=args.merge,
            candidates=args.candidates,
            rerank=args.rerank,
            expand=args.expand,
            principal=principal_of(args, ws.path),
        )
        if args.json:
            print(result.model_dump_json(indent=2))
        else:
            from trilha.cli.render import render_result

            print(render_result(result))
    return 0
