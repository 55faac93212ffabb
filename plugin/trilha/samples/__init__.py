"""The demo's data: a corpus of 15 documents (pt-BR and en, two organisations), its users
(``principals.yaml``), graph records, conversation turns and questions (``questions.yaml``)."""

from __future__ import annotations

import shutil
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trilha.workspace import Workspace


def load_samples(ws: Workspace) -> Any:
    """Index the sample corpus (and its graph records when ``ws`` has a graph) into ``ws`` and
    copy its ``principals.yaml`` there if the workspace has none; returns the ingest report."""
    from trilha.access.directory import PRINCIPALS_FILE
    from trilha.ingest.loaders import load_path

    samples = files("trilha.samples")
    report = ws.ingest(load_path(Path(str(samples / "corpus"))), progress=False)
    if ws.graph is not None:
        ws.ingest_records(Path(str(samples / "graph" / "records.jsonl")))
    if not (ws.path / PRINCIPALS_FILE).exists():
        shutil.copyfile(Path(str(samples / PRINCIPALS_FILE)), ws.path / PRINCIPALS_FILE)
    return report
