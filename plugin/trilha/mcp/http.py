"""MCP over streamable HTTP, each request read as the caller its API key names.

:func:`http_app` is the SDK's streamable HTTP app (endpoint ``/mcp``) behind :class:`KeyedEdge`,
which resolves every request's key as ``trilha serve`` does (``Authorization: Bearer KEY`` or
``X-API-Key: KEY``; the same service file, tenants and refusals, through
:class:`~trilha.server.projects.Projects`), and the project from the ``project_id`` query
parameter (``/mcp?project_id=atlas``; without it, the tenant's only project). A refusal is the
service's own: its status (401, 403, 404, 400) and ``{"detail": "…"}``. The tools then read as
that principal.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from trilha.mcp.server import build_server
from trilha.mcp.tools import Toolbox
from trilha.server.errors import ApiError
from trilha.server.projects import Projects, Resolved

#: Where the edge leaves the resolved caller in the request's scope state.
SEAT = "trilha_seat"


class KeyedEdge:
    """ASGI middleware: resolves each HTTP request's caller, or answers the service's refusal."""

    def __init__(self, app: ASGIApp, projects: Projects) -> None:
        self.app = app
        self.projects = projects

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            project_id = (query.get("project_id") or [None])[0]
            try:
                caller = self.projects.caller(
                    headers.get("authorization"), headers.get("x-api-key")
                )
                seat = self.projects.resolve(caller, project_id)
            except ApiError as e:
                refusal = JSONResponse({"detail": e.message}, e.status, headers=e.headers)
                await refusal(scope, receive, send)
                return
            scope.setdefault("state", {})[SEAT] = seat
        await self.app(scope, receive, send)


def _seat(ctx: ServerRequestContext[Any, Any]) -> Resolved:
    """The caller :class:`KeyedEdge` resolved for this request."""
    if ctx.request is None:  # only HTTP requests reach this server
        raise MCPError(types.INVALID_REQUEST, "this MCP server answers HTTP requests only")
    seat: Resolved = ctx.request.scope["state"][SEAT]
    return seat


def http_app(projects: Projects, host: str = "127.0.0.1", toolbox: Toolbox | None = None) -> Any:
    """The ASGI app serving MCP at ``/mcp`` to the callers ``projects``' keys name (``host``:
    the address it listens on; on a loopback one, requests naming another Host are refused,
    as the SDK guards against DNS rebinding)."""
    server = build_server(_seat, toolbox)
    return KeyedEdge(server.streamable_http_app(host=host), projects)
