"""What a refused caller is told: one neutral line saying what to do, never what the server
keeps (its users, its file paths, a server file's parse error); those go to the service's log."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.server import Projects, ServiceConfig, create_app
from trilha.server.config import KeyEntry, ProjectEntry
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

GHOST = "ghost-key-0123456789abcdef"
USERS = ("alice", "bob", "carol")


@pytest.fixture()
def lone(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[TestClient]:
    """A service over one empty workspace whose principals.yaml knows alice, bob and carol;
    the key names 'ghost', a user removed from it."""
    ws = Workspace.open(
        tmp_path / "ws", TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    )
    (ws.path / "principals.yaml").write_text(
        "principals:\n" + "".join(f"  {u}: {{clearance: 1}}\n" for u in USERS), encoding="utf-8"
    )
    config = ServiceConfig(
        projects={"solo": ProjectEntry(workspace=Path("solo"), tenant="t")},
        keys=[KeyEntry(key=GHOST, tenant="t", user="ghost")],
    )
    projects = Projects.over(config, {"solo": ws})
    with TestClient(create_app(projects)) as client:
        yield client
    projects.close()
    ws.close()


def _retrieve(client: TestClient) -> tuple[int, str]:
    r = client.post("/v1/retrieve", json={"query": "budget"}, headers={"X-API-Key": GHOST})
    return r.status_code, r.json()["detail"]


def test_a_removed_user_is_not_told_who_else_is_there(
    lone: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="trilha.server"):
        status, detail = _retrieve(lone)
    assert status == 403
    assert not any(u in detail for u in USERS), detail
    assert "principals.yaml" not in detail and "operator" in detail
    assert "ghost" in caplog.text and "alice" in caplog.text  # the operator reads why


def test_a_broken_principals_file_is_not_shown_to_callers(
    lone: TestClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "ws" / "principals.yaml").write_text("principals: [unclosed\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="trilha.server"):
        status, detail = _retrieve(lone)
    assert status == 403
    assert str(tmp_path) not in detail and "YAML" not in detail and "yaml" not in detail
    assert "operator" in detail
    assert "not valid YAML" in caplog.text  # the operator reads the parse error
