"""``trilha mcp``: the agent tools over the Model Context Protocol (stdio or streamable HTTP)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from trilha.cli.options import add_workspace_options, settings_of
from trilha.cli.serve import listen, service_config
from trilha.errors import BadRequestError, requires_extra

#: The port ``--transport http`` listens on by default (``trilha serve`` takes 8080).
DEFAULT_PORT = 8765


def add_parser(sub: Any) -> None:
    """The ``mcp`` command and its options."""
    sp = sub.add_parser(
        "mcp",
        help="serve the agent tools over MCP (trilha_search, trilha_context, trilha_ask, graph)",
        description="Serve trilha's agent tools and document resources to MCP clients: over "
        "stdio (a local agent starts this command; it asks as --user, else anonymous) or "
        "streamable HTTP at /mcp (each request's API key names the caller, as for trilha "
        "serve). Give one workspace (-w) or a service file (--config).",
    )
    add_workspace_options(sp)
    sp.add_argument("--config", type=Path, help="service file (default: TRILHA_SERVE_CONFIG)")
    sp.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="default: stdio"
    )
    sp.add_argument("--host", help="HTTP: address to listen on (default: TRILHA_SERVE_HOST)")
    sp.add_argument("--port", type=int, help=f"HTTP: port (default: {DEFAULT_PORT})")
    sp.add_argument("--user", help="stdio: who asks, a user of the workspace's principals.yaml")
    sp.add_argument("--project", help="stdio with --config: the project served (default: the only)")
    sp.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Open the projects and serve MCP until the client (stdio) or a signal (HTTP) stops it."""
    with requires_extra("mcp", "trilha mcp"):
        import fastapi  # noqa: F401 - here only to say what to install (trilha.server's)
        import mcp.server  # noqa: F401
    settings = settings_of(args)
    config = service_config(args, settings)
    if args.transport == "stdio":
        for option in ("host", "port"):
            if getattr(args, option) is not None:
                raise BadRequestError(f"--{option} is for --transport http; leave it out")
        return _stdio(args, config, settings)
    for option in ("user", "project"):
        if getattr(args, option) is not None:
            raise BadRequestError(
                f"--{option} is for --transport stdio; over HTTP each request's API key names "
                "its caller and the URL's ?project_id= its project"
            )
    return _http(args, config, settings)


def _stdio(args: argparse.Namespace, config: Any, settings: Any) -> int:
    import anyio

    from trilha.access.principal import Principal
    from trilha.mcp.server import build_server, fixed, serve_stdio
    from trilha.server import Projects
    from trilha.server.projects import Caller, Resolved

    projects = Projects.open(config, settings)
    try:
        project = _one(list(projects), args.project)
        who = project.orchestrator.principal_for(args.user) if args.user else Principal()
        projects.warm()
        seat = Resolved(project, who, Caller(project.tenant, None))
        print(f"trilha mcp: serving {project.project_id} over stdio", file=sys.stderr)
        anyio.run(serve_stdio, build_server(fixed(seat)))
    finally:
        projects.close()
    return 0


def _one(projects: list[Any], name: str | None) -> Any:
    """The project named ``name``, or the only one."""
    names = ", ".join(p.project_id for p in projects)
    if name is None:
        if len(projects) != 1:
            raise BadRequestError(f"the service file serves {names}; name one with --project")
        return projects[0]
    for p in projects:
        if p.project_id == name:
            return p
    raise BadRequestError(f"--project {name}: no such project; the service file serves {names}")


def _http(args: argparse.Namespace, config: Any, settings: Any) -> int:
    import uvicorn

    from trilha.mcp.http import http_app
    from trilha.server import Projects

    host = args.host or settings.serve_host
    port = args.port if args.port is not None else DEFAULT_PORT
    if not 1 <= port <= 65535:
        raise BadRequestError(f"--port {port} is not a port; give 1–65535")
    with listen(host, port) as sock:
        projects = Projects.open(config, settings)
        try:
            projects.warm()
            app = http_app(projects, host)
            print(f"trilha mcp: serving {', '.join(config.projects)} over streamable HTTP on "
                  f"http://{host}:{port}/mcp", file=sys.stderr)  # fmt: skip
            with contextlib.suppress(KeyboardInterrupt):  # uvicorn stopped on the signal
                uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
        finally:
            projects.close()
    return 0
