"""``trilha graph …``: subgraph, path, top-N, mermaid, context.md, PNG and records."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trilha.cli.options import (
    add_principal_options,
    add_workspace_options,
    open_workspace,
    principal_of,
)
from trilha.errors import BadRequestError

#: The commands that read a document's subgraph, and what each shows.
SUBGRAPH_COMMANDS = {
    "subgraph": "nodes and edges around a document (≤2 hops)",
    "mermaid": "a document's subgraph as mermaid text",
    "png": "a document's subgraph drawn to a PNG",
}


def add_parser(sub: Any) -> None:
    """The ``graph`` command and its own subcommands."""
    sp = sub.add_parser(
        "graph", help="graph retrieval: subgraph, path, topn, mermaid, context, png, records"
    )
    gsub = sp.add_subparsers(dest="graph_command", required=True, metavar="GRAPH_COMMAND")
    for op, helptext in SUBGRAPH_COMMANDS.items():
        _add_subgraph_parser(gsub, op, helptext)
    g = gsub.add_parser("path", help="shortest RELATED path between two entities")
    _add_graph_options(g)
    g.add_argument("source", help="source entity name")
    g.add_argument("target", help="target entity name")
    g.add_argument("--max-length", type=int, default=4, help="1–6 (default 4)")
    g = gsub.add_parser("topn", help="documents related to entities, with reasons")
    _add_graph_options(g)
    g.add_argument("--entity", action="append", help="entity name (repeat)")
    g.add_argument("--category", help="preferred category")
    g.add_argument("--language", help="document language, e.g. pt")
    g.add_argument("--lang", choices=("en", "pt", "zh"), default="en", help="reasons language")
    g.add_argument("--limit", type=int, default=5, help="documents (default 5)")
    _add_context_parser(gsub)
    g = gsub.add_parser("records", help="write explicit graph records (JSON/JSONL)")
    _add_graph_options(g, json_output=False)
    g.add_argument("file", help="records file")
    sp.set_defaults(func=cmd_graph)


def _add_graph_options(g: argparse.ArgumentParser, json_output: bool = True) -> None:
    add_workspace_options(g)
    add_principal_options(g)
    if json_output:
        g.add_argument("--json", action="store_true", help="print the result as JSON")


def _add_subgraph_parser(gsub: Any, op: str, helptext: str) -> None:
    g = gsub.add_parser(op, help=helptext)
    _add_graph_options(g, json_output=op == "subgraph")
    g.add_argument("doc_id", help="document id")
    g.add_argument("--entity", action="append", help="only paths to this entity (repeat)")
    g.add_argument("--max-hops", type=int, default=2, help="0–2 (default 2)")
    g.add_argument("--limit", type=int, default=30, help="nodes/edges cap (default 30)")
    if op == "png":
        g.add_argument("--out", required=True, help="PNG file to write")


def _add_context_parser(gsub: Any) -> None:
    g = gsub.add_parser("context", help="context.md for entities")
    _add_graph_options(g, json_output=False)
    g.add_argument("--entity", action="append", help="entity name (repeat)")
    g.add_argument(
        "--doc-id", help="document whose subgraph to show (default: the entities' top document)"
    )
    g.add_argument("--language", help="document language filter for top-N")
    g.add_argument("--lang", choices=("en", "pt", "zh"), default="en", help="template language")
    g.add_argument("--limit", type=int, default=5, help="top documents (default 5)")


def cmd_graph(args: argparse.Namespace) -> int:
    """Graph retrieval: subgraph, path, topn, mermaid, context, png, records."""
    with open_workspace(args) as ws:
        graph = ws.require_graph()
        doc_id = getattr(args, "doc_id", None)
        who = principal_of(args, ws.path)
        if doc_id is not None and not _sees_doc(ws, doc_id, who):  # hidden reads as missing
            raise BadRequestError(
                f"no document {doc_id!r} in workspace {ws.path}; `trilha query` finds doc ids"
            )
        if args.graph_command == "records":
            print(f"{ws.ingest_records(Path(args.file))} records written")
        elif args.graph_command == "context":
            print(_context(graph, args, who))
        else:
            _show(_read(graph, args, who), args)
    return 0


def _entities(args: argparse.Namespace) -> list[str] | None:
    """The ``--entity`` names, None when there are none."""
    return getattr(args, "entity", None) or None


def _read(graph: Any, args: argparse.Namespace, who: Any) -> Any:
    """The subgraph, path or top-N that the command asks for, as ``who`` may see it."""
    names, op = _entities(args), args.graph_command
    if op in SUBGRAPH_COMMANDS:
        return graph.subgraph(args.doc_id, names, args.max_hops, args.limit, principal=who)
    if op == "path":
        return graph.path(args.source, args.target, args.max_length, principal=who)
    return graph.topn(
        names, args.category, args.language, args.limit, reasons_lang=args.lang, principal=who
    )


def _context(graph: Any, args: argparse.Namespace, who: Any) -> str:
    """context.md for ``--entity`` names or ``--doc-id``; one of them is needed."""
    names = _entities(args)
    if not names and args.doc_id is None:
        raise BadRequestError(
            "graph context needs --entity NAME (repeatable) or --doc-id ID; "
            "`trilha graph topn` and `trilha query` show both"
        )
    return str(
        graph.context_md(
            args.doc_id,
            names or [],
            language=args.language,
            limit=args.limit,
            lang=args.lang,
            principal=who,
        )
    )


def _show(result: Any, args: argparse.Namespace) -> None:
    """Print (or draw, for ``png``) a graph read the way the command asks."""
    from trilha.cli.render import graph_text

    if args.graph_command == "mermaid":
        from trilha.graph.export.mermaid import mermaid

        print(mermaid(result))
    elif args.graph_command == "png":
        from trilha.graph.export.drawing import draw_png

        draw_png(result, Path(args.out))
        print(f"wrote {args.out}")
    elif args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(graph_text(result))


def _sees_doc(ws: Any, doc_id: str, principal: Any) -> bool:
    """Whether ``principal`` (None: anonymous) may see document ``doc_id`` of the workspace."""
    from trilha.access import ACCESS_KEYS, Access, Principal, visible

    units = ws.doc_units(doc_id)
    fields = units[0].model_dump(include=set(ACCESS_KEYS)) if units else None
    return fields is not None and visible(Access(**fields), principal or Principal.anonymous())
