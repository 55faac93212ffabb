"""trilha's MCP server (the official ``mcp`` SDK's low-level ``Server``), for one kind of caller.

:func:`build_server` serves the tools of :mod:`trilha.mcp.tools` and the resources of
:mod:`trilha.mcp.resources` to whoever ``seat_of`` says asks: over stdio, one fixed project and
principal (:func:`fixed`); over streamable HTTP, the project and principal the request's API key
resolves to (:func:`trilha.mcp.http.http_app`). Nothing a client sends names the principal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from trilha.mcp.resources import TEMPLATES, read
from trilha.mcp.tools import Toolbox, call
from trilha.server.projects import Resolved

#: Who asks, from a request's context.
SeatOf = Callable[[ServerRequestContext[Any, Any]], Resolved]

INSTRUCTIONS = (
    "trilha: hybrid search, cited answers and a knowledge graph over one project's documents, "
    "showing only what the caller may see. Cite the doc_id and unit_id the tools return."
)


def fixed(seat: Resolved) -> SeatOf:
    """Every request asks as ``seat`` (stdio: the process's one caller)."""
    return lambda _ctx: seat


def build_server(seat_of: SeatOf, toolbox: Toolbox | None = None) -> Server[Any]:
    """The MCP server; ``toolbox`` keeps the tools made per project and principal."""
    from trilha import __version__

    box = toolbox or Toolbox()

    def tools_of(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
        seat = seat_of(ctx)
        return box.tools(seat.project, seat.principal)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], _: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        seat = seat_of(ctx)
        return types.ListToolsResult(tools=box.listing(seat.project, seat.principal))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call(tools_of(ctx), params.name, params.arguments)

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        seat = seat_of(ctx)
        return await anyio.to_thread.run_sync(read, str(params.uri), seat.project, seat.principal)

    return Server(
        "trilha",
        version=__version__,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=box.input_schema,  # not the tools/list handler on every call
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resource_templates=_list_templates,
        on_list_resources=_list_resources,
        on_read_resource=read_resource,
    )


async def _list_templates(
    _ctx: ServerRequestContext[Any, Any], _: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)


async def _list_resources(
    _ctx: ServerRequestContext[Any, Any], _: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[])  # one per document: the templates say how


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes them."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
