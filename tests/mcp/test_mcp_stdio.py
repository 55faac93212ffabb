"""``trilha mcp`` over stdio, spawned as a local agent spawns it, through the ``mcp`` SDK's
client: it asks as ``--user``, lists the tools and resource templates, answers, and refuses bad
arguments in one line while it keeps serving."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import ORG
from trilha.access.directory import PRINCIPALS_FILE
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

RUNBOOK = "Security incidents are reported to the SOC within one hour; the SOC opens a ticket."
MEMO = "Maria's incident budget: the SOC gets two more analysts next quarter."


@pytest.fixture(scope="module")
def stdio_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Path:
    """A workspace (no graph) with a public runbook and maria.cfo's private memo, closed."""
    folder = tmp_path_factory.mktemp("mcp-stdio") / "ws"
    docs = [
        SourceDocument(doc_id="runbook", text=RUNBOOK, source_type="text", meta={"lang": "en"}),
        SourceDocument(doc_id="maria-memo", text=MEMO, source_type="text",
                       meta={"lang": "en", "visibility": "private", "owner_id": "maria.cfo"}),
    ]  # fmt: skip
    with Workspace.open(folder, TrilhaSettings(graph_backend="none"), embedder=embedder,
                        create=True) as ws:  # fmt: skip
        assert not ws.ingest(docs).refused
    shutil.copyfile(ORG / PRINCIPALS_FILE, folder / PRINCIPALS_FILE)
    return folder


async def test_trilha_mcp_over_stdio_asks_as_the_user(stdio_ws: Path) -> None:
    trilha = Path(sys.executable).with_name("trilha")
    params = StdioServerParameters(
        command=str(trilha),
        args=["mcp", "-w", str(stdio_ws), "--user", "maria.cfo"],
        env={**os.environ, "TRILHA_GRAPH_BACKEND": "none"},
    )
    async with Client(params, read_timeout_seconds=120) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        templates = (await client.list_resource_templates()).resource_templates
        found = await client.call_tool("trilha_search", {"query": "SOC incident", "top_k": 5})
        bad = await client.call_tool("trilha_search", {"query": "SOC", "as_user": "bruno.ti"})
        answer = await client.call_tool("trilha_ask", {"question": "Who gets more analysts?"})
    assert names == ["trilha_search", "trilha_context", "trilha_ask"]
    assert len(templates) == 2
    assert not found.is_error
    assert {h["unit"]["doc_id"] for h in found.structured_content["hits"]} == {
        "runbook",
        "maria-memo",  # private to maria.cfo: the process asks as --user
    }
    assert bad.is_error and bad.content[0].text.startswith("trilha_search: as_user: extra")
    assert not answer.is_error and answer.structured_content["citations"]
