"""``GET /healthz``: whether the service can answer, and each project's backends to operators.

An index that cannot answer (the lexical side, which holds the unit store's snapshot, or the
dense index) makes the service ``down`` (503); a graph, cache or model that is down only
``degraded`` (200), because searches go on without it, saying so in their traces.

Anyone (no key, also where keyless calls are refused) reads only ``{status}``: which projects a
service holds, and how many units each, are what tenants must not learn of each other. A key
marked ``operator`` also reads ``projects``: its own tenant's, each with its units, dense index,
graph and cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trilha.server.projects import Project, Projects


def health(projects: Projects, tenant: str | None = None) -> dict[str, Any]:
    """``{status: ok|degraded|down}`` of the whole service, and with ``tenant`` (an operator
    key's) ``projects: {id: {status, units, dense, graph, cache}}`` of that tenant's projects."""
    report = {p.project_id: (p.tenant, _project(p)) for p in projects}
    states = {v["status"] for _, v in report.values()}
    status = "down" if "down" in states else "degraded" if "degraded" in states else "ok"
    if tenant is None:
        return {"status": status}
    mine = {pid: detail for pid, (owner, detail) in report.items() if owner == tenant}
    return {"status": status, "projects": mine}


def operator_tenant(
    projects: Projects, authorization: str | None, api_key: str | None
) -> str | None:
    """The tenant whose projects the caller may see in detail: an operator key's; None for a
    call without a key or with a key not marked ``operator`` (an unknown key is a 401)."""
    if not authorization and not api_key:
        return None
    key = projects.caller(authorization, api_key).key
    return key.tenant if key is not None and key.operator else None


def _project(project: Project) -> dict[str, Any]:
    ws = project.workspace
    out: dict[str, Any] = {"status": "ok"}
    try:
        out["units"] = len(ws.searcher.lexical)
        out["dense"] = f"{ws.dense.count()} vectors"
    except Exception as e:  # any failure of an index is reported, never raised
        out["status"], out["index_error"] = "down", str(e).splitlines()[0] if str(e) else repr(e)
        return out
    out["graph"] = _graph(ws)
    if out["graph"].startswith("down"):
        out["status"] = "degraded"
    s = ws.settings
    out["cache"] = "redis" if s.redis_url else "memory" if s.result_cache_ttl_s else "off"
    return out


def _graph(ws: Any) -> str:
    if ws.graph is None:
        warning = ws.graph_warning
        return f"down: {warning}" if warning else "off"
    try:
        ws.graph.store.run("RETURN 1 AS one")
    except Exception as e:  # a graph that is down degrades searches; it is reported here
        return f"down: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    return f"up ({ws.settings.graph_backend})"
