"""trilha's MCP server over streamable HTTP, through the ``mcp`` SDK's own client: who asks is
the API key (as for ``trilha serve``), results are text plus structured content, resources read
as the caller sees them, and bad arguments are one-line tool errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import KEYS, McpService

MEMO = "finance/budget-memo-q3-2025"  # sensitivity 2: maria.cfo reads it, bruno.ti does not
NOTE = "notas/bruno-pedido-remoto"  # bruno.ti's private note


@asynccontextmanager
async def connect(service: McpService, who: str, query: str = "") -> AsyncIterator[Client]:
    """An MCP client over streamable HTTP sending ``who``'s API key."""
    http = httpx2.AsyncClient(headers={"X-API-Key": KEYS[who]}, timeout=60)
    async with http, Client(streamable_http_client(service.url + query, http_client=http)) as c:
        yield c


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_search_answers_with_text_and_cited_hits(mcp_http: McpService) -> None:
    async with connect(mcp_http, "maria") as client:
        result = await client.call_tool("trilha_search", {"query": "budget memo", "top_k": 5})
    assert not result.is_error, text(result)
    hits = result.structured_content["hits"]
    assert hits and MEMO in {h["unit"]["doc_id"] for h in hits}
    assert text(result).startswith("[1] ") and MEMO in text(result)
    assert all(h["unit"]["unit_id"] in text(result) for h in hits)


async def test_the_key_decides_what_is_seen(mcp_http: McpService) -> None:
    async with connect(mcp_http, "bruno") as client:
        result = await client.call_tool("trilha_search", {"query": "budget memo", "top_k": 20})
        with pytest.raises(MCPError, match="no document"):
            await client.read_resource(f"trilha://doc/{MEMO.replace('/', '%2F')}/context.md")
    assert MEMO not in {h["unit"]["doc_id"] for h in result.structured_content["hits"]}
    assert MEMO not in text(result)


async def test_context_returns_the_bundle_for_the_keys_user(mcp_http: McpService) -> None:
    async with connect(mcp_http, "maria") as client:
        result = await client.call_tool("trilha_context", {"question": "travel refund deadline"})
        empty = await client.call_tool("trilha_context", {"question": ""})
    bundle = result.structured_content
    assert not result.is_error and bundle["context_items"]
    assert all(i["citation"]["label"] in text(result) for i in bundle["context_items"])
    assert empty.is_error and text(empty).startswith("trilha_context: question")


@pytest.mark.parametrize(
    ("arguments", "starts"),
    [
        ({"query": "vpn", "user_id": "maria.cfo"}, "trilha_search: user_id: extra"),
        ({"query": "vpn", "principal": {"clearance": 9}}, "trilha_search: principal: extra"),
        ({"query": "vpn", "top_k": "many"}, "trilha_search: top_k:"),
        ({}, "trilha_search: query:"),
    ],
)
async def test_bad_arguments_are_one_line_tool_errors(
    mcp_http: McpService, arguments: dict[str, Any], starts: str
) -> None:
    async with connect(mcp_http, "bruno") as client:
        bad = await client.call_tool("trilha_search", arguments)
        after = await client.call_tool("trilha_search", {"query": "vpn"})  # the server lives on
    assert bad.is_error and text(bad).startswith(starts) and "\n" not in text(bad)
    assert "Traceback" not in text(bad) and not after.is_error


async def test_an_unknown_tool_is_a_tool_error(mcp_http: McpService) -> None:
    async with connect(mcp_http, "bruno") as client:
        result = await client.call_tool("trilha_delete_everything", {})
    assert result.is_error and "no tool 'trilha_delete_everything'" in text(result)


async def test_resources_read_as_the_caller_sees_them(mcp_http: McpService) -> None:
    note = f"trilha://doc/{NOTE.replace('/', '%2F')}/subgraph.mmd"
    async with connect(mcp_http, "bruno") as client:
        templates = await client.list_resource_templates()
        mine = await client.read_resource(note)
        brief = await client.read_resource(f"trilha://doc/{NOTE}/context.md")
    assert {t.uri_template for t in templates.resource_templates} == {
        "trilha://doc/{doc_id}/subgraph.mmd",
        "trilha://doc/{doc_id}/context.md",
    }
    assert mine.contents[0].text.startswith("graph LR") and brief.contents[0].text.strip()
    async with connect(mcp_http, "maria") as client:
        with pytest.raises(MCPError) as hidden:
            await client.read_resource(note)
        with pytest.raises(MCPError) as missing:
            await client.read_resource("trilha://doc/nope%2Fnothing/subgraph.mmd")
    assert hidden.value.message.replace(NOTE, "X") == missing.value.message.replace(
        "nope/nothing", "X"
    )


def test_keys_are_read_as_trilha_serve_reads_them(mcp_http: McpService) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    for headers, status in (({}, 401), ({"X-API-Key": "not-a-key"}, 401),
                            ({"Authorization": "Basic abc"}, 401)):  # fmt: skip
        r = httpx.post(mcp_http.url, json=init, headers={**headers, **accept})
        assert r.status_code == status and r.headers["WWW-Authenticate"] == "Bearer"
        assert r.json()["detail"] and "Traceback" not in r.text
    theirs = httpx.post(mcp_http.url + "?project_id=acme", json=init,
                        headers={"X-API-Key": KEYS["gina"], **accept})  # fmt: skip
    missing = httpx.post(mcp_http.url + "?project_id=nope", json=init,
                         headers={"X-API-Key": KEYS["gina"], **accept})  # fmt: skip
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["detail"].replace("acme", "X") == missing.json()["detail"].replace(
        "nope", "X"
    )


async def test_a_tenant_without_a_graph_lists_no_graph_tools(mcp_http: McpService) -> None:
    async with connect(mcp_http, "gina") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        hits = await client.call_tool("trilha_search", {"query": "incident report"})
    assert names == ["trilha_search", "trilha_context", "trilha_ask"]
    globex = mcp_http.projects.resolve(mcp_http.projects.caller(None, KEYS["gina"]), None)
    docs = {u.doc_id for u in globex.project.workspace.searcher.lexical.units}
    assert {h["unit"]["doc_id"] for h in hits.structured_content["hits"]} <= docs
