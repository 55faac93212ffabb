"""``trilha serve``: the HTTP service (FastAPI on uvicorn) over one workspace or a service file."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import socket
from pathlib import Path
from typing import Any

from trilha.cli.options import add_workspace_options, say, settings_of
from trilha.errors import BadRequestError, requires_extra


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
    from trilha.index.docstore import STORE_FILE
    from trilha.server.config import ServiceConfig, load_service_config

    path = args.config or settings.serve_config
    if path is not None:
        if getattr(args, "workspace", None):
            raise BadRequestError("give --config or --workspace, not both")
        return load_service_config(Path(path))
    if not settings.store_url and not (settings.workspace / STORE_FILE).exists():
        raise BadRequestError(
            f"no trilha workspace at {settings.workspace}; pass -w WORKSPACE or --config FILE"
        )
    return ServiceConfig.single(settings.workspace)


def cmd_serve(args: argparse.Namespace) -> int:
    """Open the projects and serve until interrupted. What stops the start (a workspace missing
    or held by another process, a port in use, an address that is not one) is one line and exit
    2, said before the "serving on" line."""
    with requires_extra("server", "trilha serve"):
        import fastapi  # noqa: F401 - here only to say what to install
        import uvicorn  # noqa: F401

    from trilha.workspace.shared import check_shareable

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
    with listen(host, port) as sock:
        uconfig, projects = _prepare(args, config, settings, workers, host, port)
        try:
            processes = f" in {workers} processes" if workers > 1 else ""
            say(args, f"serving {', '.join(config.projects)} on http://{host}:{port}{processes} "
                      "(OpenAPI at /docs)")  # fmt: skip
            _run(uconfig, sock)
        finally:
            if projects is not None:
                projects.close()
    return 0


def _prepare(
    args: argparse.Namespace, config: Any, settings: Any, workers: int, host: str, port: int
) -> tuple[Any, Any]:
    """uvicorn's config and the projects it serves (opened and warmed here, so that a missing
    or held workspace stops the start); with workers, each opens its own and these are only
    opened to see that they open, then closed."""
    import uvicorn

    from trilha.server import Projects, create_app

    projects = Projects.open(config, settings)
    if workers > 1:
        projects.close()
        os.environ.update(worker_environment(args, settings))
        return uvicorn.Config("trilha.server.app:from_environment", factory=True, host=host,
                              port=port, workers=workers, log_level="warning"), None  # fmt: skip
    try:
        projects.warm()
        app = create_app(projects)
    except BaseException:
        projects.close()
        raise
    return uvicorn.Config(app, host=host, port=port, log_level="warning"), projects


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` as uvicorn binds one, or one line saying why not."""
    if host.count(".") == 3 and host.replace(".", "").isdigit():  # no resolver for 256.1.1.1
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise BadRequestError(
                f"--host {host} is not an IPv4 address; give one such as 127.0.0.1 (this "
                "machine only) or 0.0.0.0 (every interface)"
            ) from None
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise BadRequestError(_bind_refusal(host, port, e)) from None
    sock.set_inheritable(True)
    return sock


def _bind_refusal(host: str, port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use by another process; give another --port, or stop it"
        )
    if error.errno == errno.EACCES:
        return f"port {port} needs privileges this process lacks; give a --port above 1023"
    if isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL:
        return (f"--host {host} is not an address of this machine; give one of its addresses, "
                "127.0.0.1 (this machine only) or 0.0.0.0 (every interface)")  # fmt: skip
    return (
        f"cannot listen on {host}:{port} ({error.strerror or error}); give another --host or --port"
    )


def _run(uconfig: Any, sock: socket.socket) -> None:
    """uvicorn over the bound socket (one process, or a supervisor of workers) until a signal."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    try:
        if uconfig.workers > 1:
            Multiprocess(uconfig, sockets=[sock]).run()
        else:
            uvicorn.Server(uconfig).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shut down gracefully and raised the signal again
        pass


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
