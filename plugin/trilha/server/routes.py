"""The endpoints: each resolves the caller's project and principal from the API key
(:meth:`~trilha.server.projects.Projects.resolve`), calls the Python API as it is, records the
trace in the metrics, and returns the API's own model. No retrieval logic lives here."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from importlib.resources import files
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Header, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from trilha.access.principal import Principal
from trilha.answer import Answer, aask
from trilha.errors import ConfigurationError
from trilha.graph.read.results import PathResult, SubgraphResult, TopNResult
from trilha.memory.jobs import JobStats
from trilha.orchestrate import ContextBundle, RetrievalRequest
from trilha.retrieve.dual import DualResult, dual_search
from trilha.retrieve.features import FeatureResult, feature_search
from trilha.server.bodies import (
    ContextBody,
    DualBody,
    FeaturesBody,
    PathBody,
    QueryBody,
    RetrieveBody,
    RetrieveResponse,
    SubgraphBody,
    TopNBody,
)
from trilha.server.errors import ANY_ROUTE, KEYED, ApiError, responses
from trilha.server.health import health, operator_tenant
from trilha.server.metrics import ServiceMetrics
from trilha.server.projects import Caller, Projects, Resolved

if TYPE_CHECKING:
    from trilha.graph.service import GraphService

T = TypeVar("T")
router = APIRouter()
log = logging.getLogger(__name__)

#: The 409 of a graph read on a project without a graph.
NO_GRAPH = "this project has no graph to read; ask the service's operator"
#: The error responses of a route that reads a project as the key's caller.
KEYED_ERRORS = responses(*KEYED)


def _projects(request: Request) -> Projects:
    projects: Projects = request.app.state.projects
    return projects


def _metrics(request: Request) -> ServiceMetrics:
    metrics: ServiceMetrics = request.app.state.metrics
    return metrics


def caller(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    x_api_key: Annotated[str | None, Header()] = None,
) -> Caller:
    """The caller the request's key names (401 without a valid one, unless keyless calls are
    served as anonymous)."""
    return _projects(request).caller(authorization, x_api_key)


Who = Annotated[Caller, Depends(caller)]


def _json(model: BaseModel, headers: dict[str, str] | None = None) -> Response:
    """``model`` as JSON, serialised once (the route's ``response_model`` documents it; FastAPI
    would otherwise validate and serialise it again)."""
    return Response(model.model_dump_json(), media_type="application/json", headers=headers)


def _resolve(request: Request, who: Caller, project_id: str | None) -> Resolved:
    return _projects(request).resolve(who, project_id)


@router.post(
    "/v1/retrieve", response_model=RetrieveResponse, tags=["retrieval"], responses=KEYED_ERRORS
)
async def retrieve(body: RetrieveBody, who: Who, request: Request) -> Response:
    """Hybrid search (seed 001): BM25 ∪ dense, weighted or RRF, KG boost, expansion, rerank.
    ``Server-Timing: call;dur=…`` says how long the Python call took (the rest is HTTP)."""
    r = _resolve(request, who, body.project_id)
    start = time.perf_counter()
    result = await r.project.workspace.asearch(
        body.query, top_k=body.top_k, merge=body.strategy, kg=body.include_kg,
        expand=body.expand_query, rerank=body.rerank, filters=body.filters,
        principal=r.principal,
    )  # fmt: skip
    t = result.trace
    stages = [(s.name, s.latency_ms) for s in t.stages]
    _metrics(request).trace("/v1/retrieve", stages, t.cache_hit, len(t.warnings))
    call_ms = (time.perf_counter() - start) * 1000
    response = RetrieveResponse(
        hits=result.hits, cache_hit=t.cache_hit, expansion_queries=t.expansion_queries, trace=t
    )
    return _json(response, {"Server-Timing": f"call;dur={call_ms:.2f}"})


@router.post("/v1/query", response_model=Answer, tags=["answers"], responses=KEYED_ERRORS)
async def query(body: QueryBody, who: Who, request: Request) -> Response:
    """A short cited answer (seed 002's request and response)."""
    r = _resolve(request, who, body.project_id)
    answer = await aask(
        r.project.workspace, body.question, project_id=body.project_id, filters=body.filters,
        params=body.params, principal=r.principal,
    )  # fmt: skip
    t = answer.trace
    stages = [(n.name, n.latency_ms) for n in t.stages]
    _metrics(request).trace("/v1/query", stages, t.cache_hit, len(t.warnings))
    return _json(answer)


@router.post(
    "/v1/context", response_model=ContextBundle, tags=["orchestrator"], responses=KEYED_ERRORS
)
async def context(body: ContextBody, who: Who, request: Request) -> Response:
    """The orchestrator's ContextBundle for the key's user."""
    r = _resolve(request, who, body.project_id)
    user_id = r.principal.user_id
    if user_id is None:
        raise ApiError(403, "the orchestrator answers named users; use a key that names a user")
    agents = sorted(a.agent_type for a in r.project.orchestrator.config.agents.values())
    if body.agent_type not in agents:
        raise ApiError(422, f"agent_type: {body.agent_type!r} is not an agent of this project; "
                            f"use one of {', '.join(agents)}")  # fmt: skip
    fields: dict[str, Any] = body.model_dump(exclude={"project_id"}, exclude_none=True)
    req = RetrievalRequest.make(user_id=user_id, **fields)
    bundle = await r.project.orchestrator.aretrieve(req, r.principal)
    stages = [(s.name, s.latency_ms) for s in bundle.trace.stages]
    _metrics(request).trace("/v1/context", stages, None, len(bundle.trace.warnings))
    return _json(bundle)


@router.post(
    "/v1/factual/dual-search", response_model=DualResult, tags=["retrieval"], responses=KEYED_ERRORS
)
async def dual(body: DualBody, who: Who, request: Request) -> DualResult:
    """Facts and thesis searched separately, with the divergence report (seed 001)."""
    r = _resolve(request, who, body.project_id)
    return await asyncio.to_thread(
        dual_search, r.project.workspace, body.facts, body.thesis, top_k=body.top_k,
        filters=body.filters, principal=r.principal,
    )  # fmt: skip


@router.post(
    "/v1/search/features", response_model=FeatureResult, tags=["retrieval"], responses=KEYED_ERRORS
)
async def features(body: FeaturesBody, who: Who, request: Request) -> FeatureResult:
    """Documents whose extracted fields pass the filters (seed 001)."""
    r = _resolve(request, who, body.project_id)
    return await asyncio.to_thread(
        feature_search, r.project.workspace, body.filters(), r.principal, body.limit
    )


async def _graph(
    request: Request,
    who: Caller,
    project_id: str | None,
    call: Callable[[GraphService, Principal], T],
) -> T:
    """``call`` on the project's graph (409 when it has none), off the event loop."""
    r = _resolve(request, who, project_id)
    try:
        graph = r.project.workspace.require_graph()
    except ConfigurationError as e:  # why (a server path, a connection error) is the log's
        log.warning("project %s has no graph: %s", r.project.project_id, e)
        raise ApiError(409, NO_GRAPH) from None
    return await asyncio.to_thread(call, graph, r.principal)


@router.post(
    "/graphrag/subgraph", response_model=SubgraphResult, tags=["graph"], responses=KEYED_ERRORS
)
async def subgraph(body: SubgraphBody, who: Who, request: Request) -> SubgraphResult:
    """A document's neighbourhood (≤ 2 hops) as the caller sees it (seed 003)."""
    return await _graph(request, who, body.project_id, lambda g, p: g.subgraph(
        body.doc_id, body.entity_names, body.max_hops, body.limit, principal=p))  # fmt: skip


@router.post("/graphrag/path", response_model=PathResult, tags=["graph"], responses=KEYED_ERRORS)
async def path(body: PathBody, who: Who, request: Request) -> PathResult:
    """The shortest path between two entities (seed 003)."""
    return await _graph(request, who, body.project_id, lambda g, p: g.path(
        body.source_entity, body.target_entity, body.max_length, principal=p))  # fmt: skip


@router.post("/graphrag/topn", response_model=TopNResult, tags=["graph"], responses=KEYED_ERRORS)
async def topn(body: TopNBody, who: Who, request: Request) -> TopNResult:
    """Related documents with their reasons (seed 003)."""
    return await _graph(request, who, body.project_id, lambda g, p: g.topn(
        body.entity_names, body.category, body.language, body.limit, principal=p))  # fmt: skip


@router.get("/v1/jobs/stats", response_model=JobStats, tags=["operations"], responses=KEYED_ERRORS)
async def jobs_stats(who: Who, request: Request, project_id: str | None = None) -> JobStats:
    """The retrieval job log's statistics (keys marked ``operator`` only)."""
    r = _resolve(request, who, project_id)
    if who.key is None or not who.key.operator:
        raise ApiError(403, "job statistics are for operator keys; ask the operator")
    return await asyncio.to_thread(r.project.orchestrator.jobs.stats)


@router.get(
    "/healthz",
    tags=["operations"],
    responses={
        503: {
            "description": "An index of a project cannot answer (the same report).",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
        **responses(401, 422, *ANY_ROUTE),
    },
)
async def healthz(
    request: Request,
    response: Response,
    authorization: Annotated[str | None, Header()] = None,
    x_api_key: Annotated[str | None, Header()] = None,
) -> dict[str, Any]:
    """Whether the service can answer (503 when an index cannot); an operator key also reads
    its tenant's projects' backends."""
    projects = _projects(request)
    tenant = operator_tenant(projects, authorization, x_api_key)
    report = await asyncio.to_thread(health, projects, tenant)
    if report["status"] == "down":
        response.status_code = 503
    return report


@router.get(
    "/metrics",
    tags=["operations"],
    response_class=Response,
    responses={
        200: {
            "description": "Prometheus text exposition.",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        **responses(*ANY_ROUTE),
    },
)
async def metrics(request: Request) -> Response:
    """Prometheus text: requests, latencies per stage, cache hit rate, degradations."""
    return _metrics(request).text()


#: The inspector page may run its own inline script and style, and talk to this service only.
_UI_POLICY = (
    "default-src 'none'; connect-src 'self'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src 'self' data:"
)


@router.get("/ui", include_in_schema=False, response_class=HTMLResponse)
async def ui() -> HTMLResponse:
    """The retrieval inspector: a question, ranked results with each stage's score, citations,
    the trace, the context bundle and the subgraph (no build step, no outside assets)."""
    page = files("trilha.server").joinpath("ui.html").read_text(encoding="utf-8")
    return HTMLResponse(page, headers={"Content-Security-Policy": _UI_POLICY})
