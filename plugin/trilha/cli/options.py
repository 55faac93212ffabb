"""What every command shares: the workspace and principal options, and what they open."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trilha.errors import BadRequestError, one_line


def add_workspace_options(sp: argparse.ArgumentParser) -> None:
    """``--workspace`` and ``--quiet``."""
    sp.add_argument(
        "--workspace", "-w", help="workspace folder (default: TRILHA_WORKSPACE or .trilha)"
    )
    sp.add_argument("--quiet", "-q", action="store_true", help="no progress bars")


def add_lang_option(sp: argparse.ArgumentParser, what: str) -> None:
    """``--lang``: the language of ``what`` that set none (default: detected from the text)."""
    sp.add_argument(
        "--lang",
        metavar="CODE",
        help=f"language of {what} that set none, e.g. pt (default: detected from the text)",
    )


def add_principal_options(sp: argparse.ArgumentParser) -> None:
    """``--user`` and ``--as-principal``: who asks."""
    group = sp.add_argument_group("who asks (default: anonymous, who sees public items only)")
    group.add_argument("--user", help="a user of the workspace's principals.yaml")
    group.add_argument(
        "--as-principal", metavar="FILE", help="YAML/JSON file of a principal's fields"
    )


def settings_of(args: argparse.Namespace) -> Any:
    """The settings, with ``--workspace`` and the reranker options over the environment's."""
    from trilha.settings import TrilhaSettings

    overrides: dict[str, Any] = {}
    if getattr(args, "workspace", None):
        overrides["workspace"] = Path(args.workspace)
    if getattr(args, "reranker", None):
        overrides["reranker_model"] = args.reranker
    if getattr(args, "rerank_backend", None):
        overrides["rerank_backend"] = args.rerank_backend
    if getattr(args, "rerank_precision", None):
        overrides["rerank_precision"] = args.rerank_precision
    if getattr(args, "answer_backend", None):
        overrides["answer_backend"] = args.answer_backend
    try:
        return TrilhaSettings(**overrides)
    except ValidationError as e:
        raise BadRequestError(f"invalid settings: {one_line(e)}") from e


def open_workspace(
    args: argparse.Namespace, *, create: bool = False, repair: bool = True, search: bool = False
) -> Any:
    """The workspace of ``--workspace``; only commands that write (ingest, demo) create one.
    Commands that ``search`` at once have the graph server start while the library is
    imported, and the encoder load while the workspace opens."""
    settings = settings_of(args)
    if search:
        from trilha.graph.stores.factory import open_ahead

        open_ahead(settings)  # the graph server starts while the rest is imported
    from trilha.workspace import Workspace
    from trilha.workspace.compose import searching_next

    with searching_next() if search else nullcontext():
        return Workspace.open(settings=settings, create=create, repair=repair)


def principal_of(args: argparse.Namespace, workspace: Path) -> Any:
    """The principal of ``--user`` (from the workspace's principals.yaml) or ``--as-principal``
    (a file of its fields); None, which searches as anonymous, when neither is given."""
    from trilha.access.directory import find_principal, load_principal_file

    user, path = getattr(args, "user", None), getattr(args, "as_principal", None)
    if user and path:
        raise BadRequestError("give --user or --as-principal, not both")
    if user:
        return find_principal(workspace, user)
    if path:
        return load_principal_file(Path(path))
    return None


def say(args: argparse.Namespace, line: str) -> None:
    """A human-readable line: on stdout, or on stderr when stdout carries JSON."""
    print(line, file=sys.stderr if getattr(args, "json", False) else sys.stdout)
