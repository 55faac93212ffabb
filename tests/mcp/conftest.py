"""The service's two tenants (tests/server: ``acme`` with the sample organisation and its graph,
``globex`` without a graph) served over MCP: in-process, and over streamable HTTP by a uvicorn
server on a free loopback port, both for the whole session."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import uvicorn

from tests.server.conftest import KEYS, globex_ws, service_config  # noqa: F401 - fixture
from trilha.cli.serve import listen
from trilha.mcp.http import http_app
from trilha.mcp.tools import Toolbox
from trilha.server import Projects
from trilha.workspace import Workspace

__all__ = ["KEYS", "McpService"]


@dataclass
class McpService:
    """The MCP endpoint's URL and the projects it serves."""

    url: str
    projects: Projects


@pytest.fixture(scope="session")
def mcp_projects(org_ws: Workspace, globex_ws: Workspace) -> Iterator[Projects]:  # noqa: F811
    projects = Projects.over(service_config(), {"acme": org_ws, "globex": globex_ws})
    yield projects
    projects.close()


@pytest.fixture(scope="session")
def mcp_http(mcp_projects: Projects) -> Iterator[McpService]:
    """``trilha mcp --transport http``'s app, served by uvicorn in a thread."""
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(http_app(mcp_projects, toolbox=Toolbox()),
                                           log_level="warning"))  # fmt: skip
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield McpService(f"http://127.0.0.1:{port}/mcp", mcp_projects)
    server.should_exit = True
    thread.join(10)
    sock.close()
