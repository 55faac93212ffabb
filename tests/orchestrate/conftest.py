"""The sample organisation as one workspace: corpus, graph records, principals and memory."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path

import pytest

from trilha.access.directory import PRINCIPALS_FILE
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import load_path
from trilha.orchestrate import Orchestrator
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

SAMPLES = files("trilha.samples")
#: The demo's "now": the sample tasks' due dates are read against it.
NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def load_org(ws: Workspace) -> None:
    """Corpus, graph records, principals and conversation turns of the sample organisation."""
    ws.ingest(load_path(Path(str(SAMPLES / "corpus"))))
    ws.ingest_records(Path(str(SAMPLES / "graph" / "records.jsonl")))
    shutil.copyfile(Path(str(SAMPLES / PRINCIPALS_FILE)), ws.path / PRINCIPALS_FILE)


@pytest.fixture(scope="session")
def org_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """The sample organisation on embedded FalkorDB, built once per session."""
    folder = tmp_path_factory.mktemp("org") / "ws"
    ws = Workspace.open(folder, TrilhaSettings(graph_backend="falkordb"), embedder=embedder)
    load_org(ws)
    yield ws
    ws.close()


@pytest.fixture(scope="session")
def orchestrator(org_ws: Workspace) -> Orchestrator:
    """An orchestrator over the sample organisation, its clock fixed at :data:`NOW`, with the
    sample conversation turns in its memory."""
    orch = Orchestrator(org_ws, clock=lambda: NOW)
    orch.memory.import_turns(Path(str(SAMPLES / "memory" / "turns.jsonl")))
    return orch
