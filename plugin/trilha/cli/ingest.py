"""``trilha ingest``: files, folders and graph records into the workspace; deletions."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from trilha.cli.options import (
    add_lang_option,
    add_workspace_options,
    open_workspace,
    say,
    settings_of,
)
from trilha.diskspace import NEW_WORKSPACE_BYTES, disk_full_errors, ensure_room
from trilha.errors import BadRequestError
from trilha.ingest.chunking import MIN_WORDS


def add_parser(sub: Any) -> None:
    """The ``ingest`` command and its options."""
    sp = sub.add_parser("ingest", help="ingest .md, .txt and .jsonl files or folders")
    add_workspace_options(sp)
    sp.add_argument("paths", nargs="*", help="files or folders to ingest")
    sp.add_argument(
        "--delete",
        action="append",
        metavar="DOC_ID",
        help="remove a document from every index (repeatable)",
    )
    sp.add_argument("--max-words", type=int, default=180, help="words per unit (default 180)")
    add_lang_option(sp, "documents")
    sp.add_argument(
        "--records",
        action="append",
        metavar="FILE",
        help="graph records (JSON/JSONL nodes and edges) to write (repeatable)",
    )
    sp.add_argument(
        "--json",
        action="store_true",
        help="print {added, updated, unchanged, refused, units_written} per path as JSON",
    )
    sp.set_defaults(func=cmd_ingest)


def cmd_ingest(args: argparse.Namespace) -> int:
    """Ingest files or folders; exit 2 when any file was refused, or when the disk is full
    (one line naming it and the bytes needed, :mod:`trilha.diskspace`)."""
    from trilha.index.docstore import STORE_FILE

    _check_inputs(args)
    refused = 0
    folder = Path(settings_of(args).workspace).expanduser()
    if not (folder / STORE_FILE).exists():  # a new workspace's dense index, before it is made
        ensure_room(folder, NEW_WORKSPACE_BYTES)
    with disk_full_errors(folder), open_workspace(args, create=True) as ws:
        for doc_id in args.delete or []:
            _delete(args, ws, doc_id)
        for path in args.paths:
            refused += _ingest_path(args, ws, path)
        for file in args.records or []:
            say(args, f"{file}: {ws.ingest_records(Path(file))} graph records written")
        say(args, f"workspace {ws.path}: {len(ws)} units, encoder {ws.embedder.model_id}")
    if refused and not args.json:
        print(
            f"trilha ingest: {refused} refused (see above); fix them and ingest again",
            file=sys.stderr,
        )
    return 2 if refused else 0


def _check_inputs(args: argparse.Namespace) -> None:
    """Refuse a call with nothing to do or a missing path, before a workspace is created."""
    if not (args.paths or args.delete or args.records):
        raise BadRequestError(
            "nothing to do: give files or folders to ingest, --delete or --records"
        )
    if args.max_words < MIN_WORDS:
        raise BadRequestError(f"--max-words must be at least {MIN_WORDS}, got {args.max_words}")
    for path in [*args.paths, *(args.records or [])]:
        if not Path(path).exists():
            raise BadRequestError(f"{path} does not exist; check the path")


def _delete(args: argparse.Namespace, ws: Any, doc_id: str) -> None:
    """Remove one document from every index; an unknown id is refused."""
    if not ws.has_doc(doc_id):
        raise BadRequestError(f"no document {doc_id!r} in workspace {ws.path}; nothing deleted")
    n = ws.delete(doc_id)
    say(args, f"deleted {doc_id}: {n} units")


def _ingest_path(args: argparse.Namespace, ws: Any, path: str) -> int:
    """Ingest one file or folder and report it; the number of refused files."""
    report = ws.ingest(
        ws.load(path),
        progress=not (args.quiet or args.json),
        max_words=args.max_words,
        lang=args.lang,
    )
    if args.json:
        print(json.dumps({"path": path, **report.summary()}, ensure_ascii=False))
        return len(report.refused)
    for refusal in report.refused:
        print(f"refused {refusal}", file=sys.stderr)
    for error in report.errors:
        print(f"warning: {error}", file=sys.stderr)
    print(
        f"{path}: {report.docs_added} added, {report.docs_updated} updated, "
        f"{report.docs_unchanged} unchanged, {len(report.refused)} refused, "
        f"{report.units_written} units written in {report.seconds:.1f} s"
    )
    return len(report.refused)
