"""A service over two tenants: ``acme`` (the sample organisation, with its graph) and
``globex`` (a small workspace without one), and keys for each."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.conftest import make_docs
from trilha.access.principal import Principal
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.server import Projects, ServiceConfig, create_app
from trilha.server.config import KeyEntry, ProjectEntry
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

KEYS = {
    "maria": "maria-key-0123456789abcdef",  # acme, the CFO (sees the confidential memo), operator
    "bruno": "bruno-key-0123456789abcdef",  # acme, IT
    "visitor": "visitor-key-0123456789abcd",  # acme, an inline principal with nothing granted
    "gina": "gina-key-0123456789abcdefgh",  # globex, sees everything globex holds
}


@dataclass
class Service:
    """The app's test client and what the tests compare its answers with."""

    client: TestClient
    projects: Projects
    docs: dict[str, set[str]]  # project id -> doc ids it holds

    def post(self, path: str, who: str | None, body: dict[str, object]) -> object:
        headers = {"X-API-Key": KEYS[who]} if who else {}
        return self.client.post(path, json=body, headers=headers)


def service_config() -> ServiceConfig:
    return ServiceConfig(
        projects={
            "acme": ProjectEntry(workspace=Path("acme"), tenant="acme"),
            "globex": ProjectEntry(workspace=Path("globex"), tenant="globex"),
        },
        keys=[
            KeyEntry(key=KEYS["maria"], tenant="acme", user="maria.cfo", operator=True),
            KeyEntry(key=KEYS["bruno"], tenant="acme", user="bruno.ti"),
            KeyEntry(key=KEYS["visitor"], tenant="acme", principal=Principal(user_id="visitor")),
            KeyEntry(
                key=KEYS["gina"],
                tenant="globex",
                principal=Principal(user_id="gina", hierarchy_level=9, clearance=9),
            ),
        ],
    )


@pytest.fixture(scope="session")
def globex_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    folder = tmp_path_factory.mktemp("globex") / "ws"
    ws = Workspace.open(
        folder, TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    )
    ws.ingest(make_docs())
    yield ws
    ws.close()


@pytest.fixture(scope="session")
def service(org_ws: Workspace, globex_ws: Workspace) -> Iterator[Service]:
    projects = Projects.over(service_config(), {"acme": org_ws, "globex": globex_ws})
    docs = {p.project_id: {u.doc_id for u in p.workspace.searcher.lexical.units} for p in projects}
    with TestClient(create_app(projects)) as client:
        yield Service(client, projects, docs)
    projects.close()


def wait_until_serving(base: str, proc: subprocess.Popen[str], seconds: float = 180) -> None:
    """Until ``trilha serve`` at ``base`` answers /healthz with 200 (fails if it exits)."""
    deadline = time.monotonic() + seconds
    while True:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"trilha serve did not answer in {seconds:.0f} s"
        time.sleep(0.5)
