"""``trilha serve``: the HTTP service (FastAPI on uvicorn) over one workspace or a service file."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from trilha.cli.options import add_workspace_options, say, settings_of
from trilha.errors import BadRequestError, MissingDependencyError


def add_parser(sub: Any) -> None:
    """The ``serve`` command and its options."""
    sp = sub.add_parser(
        "serve",
        help="serve the HTTP API (/v1/retrieve, /v1/query, /v1/context, /graphrag/*, /healthz)",
        description="Serve the workspaces of a service file (--config: projects, tenants, API "
        "keys), or one workspace (-w) to anonymous callers, who read public items only. "
        "OpenAPI at /docs and /openapi.json.",
    )
    add_workspace_options(sp)
    sp.add_argument("--config", type=Path, help="service file (default: TRILHA_SERVE_CONFIG)")
    sp.add_argument("--host", help="address to listen on (default: TRILHA_SERVE_HOST, 127.0.0.1)")
    sp.add_argument("--port", type=int, help="port (default: TRILHA_SERVE_PORT, 8080)")
    sp.add_argument(
        "--workers",
        type=int,
        help="service processes (default: TRILHA_SERVE_WORKERS, 1); more than one open the "
        "workspaces read-only, so TRILHA_QDRANT_URL and a graph server (or no graph) are needed",
    )
    sp.set_defaults(func=cmd_serve)


def service_config(args: argparse.Namespace, settings: Any) -> Any:
    """The service file's config, or one workspace served as project ``default``."""
    from trilha.server.config import ServiceConfig, load_service_config

    path = args.config or settings.serve_config
    if path is not None:
        if getattr(args, "workspace", None):
            raise BadRequestError("give --config or --workspace, not both")
        return load_service_config(Path(path))
    if not (settings.workspace / "units.sqlite").exists():
        raise BadRequestError(
            f"no trilha workspace at {settings.workspace}; pass -w WORKSPACE or --config FILE"
        )
    return ServiceConfig.single(settings.workspace)


def cmd_serve(args: argparse.Namespace) -> int:
    """Open the projects and serve until interrupted."""
    try:
        import uvicorn

        from trilha.server import create_app
        from trilha.workspace.shared import check_shareable
    except ImportError as e:
        raise MissingDependencyError("fastapi", "server", "trilha serve") from e
    settings = settings_of(args)
    workers = args.workers if args.workers is not None else settings.serve_workers
    if not 1 <= workers <= 64:
        raise BadRequestError(f"--workers {workers}: give 1–64 service processes")
    if workers > 1:
        settings = settings.model_copy(update={"read_only": True})
        check_shareable(settings)
    config = service_config(args, settings)
    host = args.host or settings.serve_host
    port = args.port if args.port is not None else settings.serve_port
    if not 1 <= port <= 65535:
        raise BadRequestError(f"--port {port} is not a port; give 1–65535")
    processes = f" in {workers} processes" if workers > 1 else ""
    say(args, f"serving {', '.join(config.projects)} on http://{host}:{port}{processes} "
              "(OpenAPI at /docs)")  # fmt: skip
    if workers == 1:
        app = create_app(config=config, settings=settings)
        uvicorn.run(app, host=host, port=port, log_level="warning")
        return 0
    os.environ.update(worker_environment(args, settings))
    uvicorn.run(
        "trilha.server.app:from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
    )
    return 0


def worker_environment(args: argparse.Namespace, settings: Any) -> dict[str, str]:
    """What each worker process reads its projects from (it starts from the environment):
    read-only, and the service file or the workspace this command was given."""
    env = {"TRILHA_READ_ONLY": "1"}
    path = args.config or settings.serve_config
    if path is not None:
        env["TRILHA_SERVE_CONFIG"] = str(Path(path).resolve())
    else:
        env["TRILHA_WORKSPACE"] = str(Path(settings.workspace).resolve())
    return env
