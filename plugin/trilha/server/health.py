"""``GET /healthz``: each project's backends and whether the service can answer.

An index that cannot answer (the lexical side, which holds the unit store's snapshot, or the
dense index) makes the whole report ``down`` (503); a graph, cache or model that is down only
``degraded`` (200), because searches go on without it, saying so in their traces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trilha.server.projects import Project, Projects


def health(projects: Projects) -> dict[str, Any]:
    """``{status: ok|degraded|down, projects: {id: {units, dense, graph, cache}}}``."""
    report = {p.project_id: _project(p) for p in projects}
    states = {v["status"] for v in report.values()}
    status = "down" if "down" in states else "degraded" if "degraded" in states else "ok"
    return {"status": status, "projects": report}


def _project(project: Project) -> dict[str, Any]:
    ws = project.workspace
    out: dict[str, Any] = {"status": "ok"}
    try:
        out["units"] = len(ws.searcher.lexical.units)
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
