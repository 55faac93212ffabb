"""The FastAPI app: :func:`create_app` over open :class:`~trilha.server.projects.Projects`.

``create_app(projects)`` serves projects the caller opened (and closes); ``create_app(config=…)``
opens them at start-up and closes them at shutdown (what ``trilha serve`` does);
:func:`from_environment` is what each process of ``trilha serve --workers N`` starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI

from trilha.server import errors, routes
from trilha.server.edge import Edge
from trilha.server.metrics import ServiceMetrics
from trilha.server.projects import Projects

if TYPE_CHECKING:
    from trilha.server.config import ServiceConfig
    from trilha.settings import TrilhaSettings

#: The largest request body read (bytes).
MAX_BODY_BYTES = 1_048_576

DESCRIPTION = (
    "Hybrid, graph-aware retrieval with provenance. Every call reads as the principal its API "
    "key names (`Authorization: Bearer KEY` or `X-API-Key: KEY`); `project_id` picks one of "
    'the key\'s projects. Errors are `{"detail": "…"}` with a 4xx, or a 503 with '
    "`Retry-After` when an index cannot answer."
)


def create_app(
    projects: Projects | None = None,
    *,
    config: ServiceConfig | None = None,
    settings: TrilhaSettings | None = None,
) -> FastAPI:
    """The service over ``projects``, or over the projects of ``config`` opened at start-up."""
    if (projects is None) == (config is None):
        raise ValueError("give the open projects or a service config, one of them")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if config is not None:
            app.state.projects = Projects.open(config, settings)
            app.state.projects.warm()
        try:
            yield
        finally:
            if config is not None:
                app.state.projects.close()

    app = FastAPI(title="trilha", description=DESCRIPTION, version="1", lifespan=lifespan)
    if projects is not None:
        app.state.projects = projects
    app.state.metrics = ServiceMetrics()
    errors.install(app)
    app.add_middleware(Edge, metrics=app.state.metrics, max_body=MAX_BODY_BYTES)
    app.include_router(routes.router)
    return app


def from_environment() -> FastAPI:
    """The service as the environment describes it (``TRILHA_*``): the projects of
    ``TRILHA_SERVE_CONFIG``, else the workspace ``TRILHA_WORKSPACE`` to anonymous callers.
    ``trilha serve --workers N`` sets both, and ``TRILHA_READ_ONLY``, for its workers."""
    from trilha.server.config import ServiceConfig, load_service_config
    from trilha.settings import TrilhaSettings

    settings = TrilhaSettings()
    if settings.serve_config is not None:
        config = load_service_config(settings.serve_config)
    else:
        config = ServiceConfig.single(settings.workspace)
    return create_app(config=config, settings=settings)
