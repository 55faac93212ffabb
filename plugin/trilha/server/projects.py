"""The workspaces a service holds open, one per project, and who may read which.

Every route asks :meth:`Projects.resolve` for the caller's project and principal: the key
names the tenant and the principal, the request may only name a project, and a project of
another tenant is answered exactly like one that does not exist (404), so a caller cannot learn
what other tenants hold.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trilha.access.principal import Principal
from trilha.errors import BackendUnavailableError, ConfigurationError, TrilhaError
from trilha.server.config import KeyEntry, ServiceConfig, key_digest
from trilha.server.errors import ApiError

if TYPE_CHECKING:
    from trilha.graph.service import GraphService
    from trilha.orchestrate import Orchestrator
    from trilha.settings import TrilhaSettings
    from trilha.types import TextUnit
    from trilha.workspace import Workspace

log = logging.getLogger(__name__)

#: The 403 of a key whose user the project's directory does not hold (or cannot be read): the
#: caller learns nothing of the directory; the service's log says why.
UNKNOWN_USER = "this key's user is not a known principal here; ask the service's operator"


@dataclass(frozen=True)
class Caller:
    """Who called: the tenant their key belongs to and the key's entry (None: keyless)."""

    tenant: str
    key: KeyEntry | None

    @property
    def label(self) -> str:
        """A short label for logs and metrics (never the key itself)."""
        return "anonymous" if self.key is None else f"key {self.key.digest[:8]}"


@dataclass
class Project:
    """One open workspace and its orchestrator (both safe to share between requests)."""

    project_id: str
    tenant: str
    workspace: Workspace
    orchestrator: Orchestrator
    owned: bool = True
    """Closed with the service (False: the caller opened the workspace and closes it)."""


@dataclass(frozen=True)
class Resolved:
    """A request's project and the principal it reads as."""

    project: Project
    principal: Principal
    caller: Caller


class Projects:
    """The service's open projects; :meth:`open` opens every workspace (so a bad path or a
    locked workspace stops ``trilha serve`` at start, not at the first call)."""

    def __init__(self, config: ServiceConfig, projects: dict[str, Project]) -> None:
        self.config = config
        self._projects = projects
        self._digests = {k.digest: k for k in config.keys}

    @classmethod
    def open(cls, config: ServiceConfig, settings: TrilhaSettings | None = None) -> Projects:
        """Open each project's workspace (none of them created)."""
        from trilha.orchestrate import Orchestrator
        from trilha.settings import TrilhaSettings
        from trilha.workspace import Workspace

        store_url = (settings or TrilhaSettings()).store_url
        if store_url and len(config.projects) > 1:
            raise ConfigurationError(
                f"TRILHA_STORE_URL names one database, which holds one workspace, but the "
                f"service file has {len(config.projects)} projects: serve each project from a "
                "trilha serve of its own, each with its own TRILHA_STORE_URL"
            )
        opened: dict[str, Project] = {}
        try:
            for pid, entry in config.projects.items():
                ws = Workspace.open(entry.workspace, settings=settings, create=False)
                opened[pid] = Project(pid, entry.tenant, ws, Orchestrator(ws))
            _one_collection_each(opened)
        except BaseException:
            for p in opened.values():
                _close(p)
            raise
        return cls(config, opened)

    @classmethod
    def over(cls, config: ServiceConfig, workspaces: dict[str, Workspace]) -> Projects:
        """Serve workspaces the caller opened (and closes), by project id."""
        from trilha.orchestrate import Orchestrator

        missing = set(config.projects) - set(workspaces)
        if missing:
            raise ValueError(f"no open workspace for project(s) {sorted(missing)}")
        return cls(config, {
            pid: Project(pid, config.projects[pid].tenant, ws, Orchestrator(ws), owned=False)
            for pid, ws in workspaces.items() if pid in config.projects
        })  # fmt: skip

    def warm(self) -> None:
        """Load each project's encoder and lexical index, and have its graph plan the seed 003
        reads (planning one takes seconds the first time), now rather than on the first call."""
        for p in self._projects.values():
            p.workspace.search("warm up", top_k=1)
            if p.workspace.graph is not None:
                try:
                    _plan_graph_reads(p.workspace.graph, p.workspace.searcher.lexical.units)
                except BackendUnavailableError as e:  # a slow or absent graph degrades calls
                    log.warning("project %s: graph warm-up failed (%s)", p.project_id, e)

    def __iter__(self) -> Iterator[Project]:
        return iter(self._projects.values())

    def close(self) -> None:
        """Close every workspace (the orchestrators' graph mirrors first)."""
        for p in self._projects.values():
            _close(p)

    def caller(self, authorization: str | None, api_key: str | None) -> Caller:
        """The caller of a request's ``Authorization: Bearer …`` or ``X-API-Key`` header."""
        presented = api_key or _bearer(authorization)
        if presented is None:
            tenant = self.config.open_tenant
            if tenant is None:
                raise ApiError(
                    401,
                    "this service needs an API key: send 'Authorization: Bearer KEY' or "
                    "'X-API-Key: KEY'",
                    {"WWW-Authenticate": "Bearer"},
                )
            return Caller(tenant, None)
        digest = key_digest(presented)
        for known, entry in self._digests.items():
            if hmac.compare_digest(known, digest):
                return Caller(entry.tenant, entry)
        raise ApiError(401, "unknown API key; ask the service's operator for one",
                       {"WWW-Authenticate": "Bearer"})  # fmt: skip

    def resolve(self, caller: Caller, project_id: str | None) -> Resolved:
        """The project a request reads (``project_id``, or the tenant's only one) and the
        principal the caller reads it as."""
        mine = [p for p in self._projects.values() if p.tenant == caller.tenant]
        if project_id is None:
            if len(mine) != 1:
                names = ", ".join(sorted(p.project_id for p in mine))
                raise ApiError(400, f"name a project_id; yours are: {names}")
            project = mine[0]
        else:
            found = self._projects.get(project_id)
            if found is None or found.tenant != caller.tenant:
                raise ApiError(404, f"no project {project_id!r} for this key")
            project = found
        return Resolved(project, self._principal(caller, project), caller)

    def _principal(self, caller: Caller, project: Project) -> Principal:
        key = caller.key
        if key is None:
            return Principal.anonymous()
        if key.principal is not None:
            return key.principal
        if key.user is not None:
            try:
                return project.orchestrator.principal_for(key.user)
            except TrilhaError as e:  # the operator's mistake, told to the operator only: the
                # message names the directory's users, its path or its parse error
                log.warning("project %s: %s names user %r: %s",
                            project.project_id, caller.label, key.user, e)  # fmt: skip
                raise ApiError(403, UNKNOWN_USER) from None
        return Principal.anonymous()


def _one_collection_each(projects: dict[str, Project]) -> None:
    """Refuse two projects whose vectors would share one Qdrant server's collection (each would
    read, and repair away, the other's points)."""
    seen: dict[tuple[str, str], str] = {}
    for pid, p in projects.items():
        url, collection = (
            p.workspace.settings.qdrant_url,
            getattr(p.workspace.dense, "collection", None),
        )
        if url is None or collection is None:
            continue
        other = seen.setdefault((url, collection), pid)
        if other != pid:
            raise ConfigurationError(
                f"projects {other!r} and {pid!r} would share Qdrant collection {collection!r} "
                f"at {url}: unset TRILHA_QDRANT_COLLECTION so that each workspace keeps its own"
            )


def _plan_graph_reads(graph: GraphService, units: Sequence[TextUnit]) -> None:
    """Run each seed 003 read once, so the graph server plans its statements (one text for
    every principal: :func:`~trilha.access.cypher.uniform_filter`). The reads run as a
    principal of the service's own who sees public items; their results are thrown away."""
    warmer = Principal(user_id="trilha-service-warm-up")
    doc = next((u.doc_id for u in units if u.visibility == "public"), None)
    if doc is None:
        return
    nodes = graph.subgraph(doc, principal=warmer).nodes
    names = [n.name for n in nodes if n.label == "Entity" and n.name][:2]
    source, target = [*names, "warm", "up"][:2]
    graph.path(source, target, principal=warmer)
    graph.topn(names or ["warm"], principal=warmer)


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "the Authorization header must read 'Bearer KEY'",
                       {"WWW-Authenticate": "Bearer"})  # fmt: skip
    return token.strip()


def _close(project: Project) -> None:
    try:
        project.orchestrator.close()
    finally:
        if project.owned:  # a shutdown leaves an HNSW build to the next writer, not minutes
            project.workspace.close(finish_build=False)
