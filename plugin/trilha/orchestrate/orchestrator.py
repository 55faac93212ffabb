"""The Retrieval Orchestrator (seed 004): one typed request in, one typed bundle out.

``retrieve(request)``: resolve the caller's principal from ``user_id`` (the workspace's
``principals.yaml``, never the request), run pre-query, plan depth, profile, strategy and budget
(:mod:`trilha.orchestrate.plan`), read the plan's sources for that principal
(:mod:`~trilha.orchestrate.sources`, :mod:`~trilha.orchestrate.graph_sources`), fit the items to
the budget and assemble the ContextBundle (:mod:`~trilha.orchestrate.assemble`), then log the
RetrievalJob (REQ-RETR-003/016). It does not answer (REQ-RETR-014): the caller's LLM does.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from trilha.access import Principal
from trilha.access.directory import PRINCIPALS_FILE, load_principals, principal_in
from trilha.config import OrchestratorConfig
from trilha.errors import BadRequestError, WorkspaceError
from trilha.memory import GraphMemoryMirror, JobLog, MemoryStore, memory_at
from trilha.memory.turns import Clock, utc_now
from trilha.orchestrate import graph_sources
from trilha.orchestrate.assemble import assemble
from trilha.orchestrate.bundle import ContextBundle
from trilha.orchestrate.graph_caches import GraphCaches
from trilha.orchestrate.joblog import JobRecorder, job_of
from trilha.orchestrate.plan import plan_retrieval
from trilha.orchestrate.prequery import GroqClassifier, prequery
from trilha.orchestrate.prequery.entities import GraphEntityFinder
from trilha.orchestrate.request import RetrievalRequest
from trilha.orchestrate.sources import Ask, Found, conversation, documents, past_jobs, timed
from trilha.types import StepTrace
from trilha.workspace import Workspace

#: Threads reading a plan's sources at once (a plan has at most six).
SOURCE_THREADS = 6


class Orchestrator:
    """Context bundles for agents over one :class:`~trilha.workspace.Workspace`."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        config: OrchestratorConfig | None = None,
        principals: Mapping[str, Principal] | None = None,
        memory: MemoryStore | None = None,
        jobs: JobLog | None = None,
        classifier: GroqClassifier | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.workspace = workspace
        self.config = config or OrchestratorConfig.load(workspace.path)
        at = memory_at(workspace.path, workspace.settings.store_url)
        self.memory = memory or MemoryStore(at, mirror=_mirror(workspace))
        self.jobs = jobs or JobLog(at)
        self._owned = [
            s for s, given in ((self.memory, memory), (self.jobs, jobs)) if given is None
        ]
        self.recorder = JobRecorder(self.jobs, workspace.graph)
        self.classifier = classifier if classifier is not None else llm_classifier(workspace)
        self._principals = principals
        self._loaded: tuple[tuple[int, int], dict[str, Principal]] | None = None
        self._directory_lock = threading.Lock()
        self._clock = clock or utc_now
        self._caches = GraphCaches.of(workspace.graph)
        self._pool = ThreadPoolExecutor(SOURCE_THREADS, thread_name_prefix="trilha-sources")

    def principal_for(self, user_id: str) -> Principal:
        """The principal ``user_id`` has in the workspace's directory; unknown users are refused."""
        known = self._principals if self._principals is not None else self._directory()
        if not known:
            raise BadRequestError(
                f"this workspace has no users: write {self.workspace.path / PRINCIPALS_FILE} "
                "(see trilha.access.directory) before asking as a user"
            )
        if self._principals is not None:
            return principal_in(known, user_id, "the principals given to this Orchestrator")
        return principal_in(known, user_id, str(self.workspace.path / PRINCIPALS_FILE))

    def _directory(self) -> Mapping[str, Principal]:
        """The workspace's principals.yaml, read again only when the file changes."""
        path = self.workspace.path / PRINCIPALS_FILE
        try:
            info = path.stat()
        except FileNotFoundError:
            return {}
        key = (info.st_mtime_ns, info.st_size)
        with self._directory_lock:
            if self._loaded is None or self._loaded[0] != key:
                self._loaded = (key, load_principals(path))
            return self._loaded[1]

    def retrieve(
        self, request: RetrievalRequest | Mapping[str, Any], principal: Principal | None = None
    ) -> ContextBundle:
        """The ContextBundle for ``request`` (a request or a mapping of its fields); the plan's
        sources are read concurrently, in threads (the graph store and the encoder release the
        GIL while they work). ``principal``, when a front that authenticated the caller (the
        HTTP service) gives it, is read as instead of ``user_id``'s entry in the directory."""
        req, ask, steps, started = self._prepare(request, principal)
        runs = [self._pool.submit(timed, partial(run, ask)) for run in self._sources(ask)]
        founds = [run.result() for run in runs]
        return self._finish(req, ask, founds, steps, started)

    async def aretrieve(
        self, request: RetrievalRequest | Mapping[str, Any], principal: Principal | None = None
    ) -> ContextBundle:
        """:meth:`retrieve` with the plan's sources read concurrently."""
        req, ask, steps, started = await asyncio.to_thread(self._prepare, request, principal)
        runs = [asyncio.to_thread(timed, partial(run, ask)) for run in self._sources(ask)]
        founds = list(await asyncio.gather(*runs))
        return await asyncio.to_thread(self._finish, req, ask, founds, steps, started)

    def _prepare(
        self, request: RetrievalRequest | Mapping[str, Any], principal: Principal | None = None
    ) -> tuple[RetrievalRequest, Ask, list[StepTrace], float]:
        started = time.perf_counter()
        if self.recorder.closed:
            raise WorkspaceError("this orchestrator is closed; make a new Orchestrator(workspace)")
        req = RetrievalRequest.of(request)
        principal = principal or self.principal_for(req.user_id)
        _check_project(req, principal)
        config = self.config.for_user(req.user_id)
        finder = self._finder(principal)
        now = self._clock()  # one instant for the horizon, the walks and the job
        outcome = prequery(req.raw_query, now=now, classifier=self.classifier, entities=finder)
        steps = list(outcome.trace.stages)
        pre = outcome.result
        plan = plan_retrieval(
            req, pre, config=config, profiles=self.config.profiles, depths=self.config.depths
        )
        agent = self.config.agents.get(f"{req.agent_type}_agent") or self.config.agents.get(
            req.agent_type
        )
        warnings: tuple[str, ...] = ()
        if agent is None:  # an open set (seed 004: 'knowledge', 'task', 'user', etc.): said
            known = ", ".join(sorted(a.agent_type for a in self.config.agents.values()))
            note = f"agent_type {req.agent_type!r} has no definition ({known}); defaults used"
            steps.append(StepTrace(name="agent", latency_ms=0.0, note=note))
            warnings = (note,)
        style = agent.answer_style if agent else None
        ask = Ask(req, principal, pre, plan, config, now, self.config.profiles, style, warnings)
        return req, ask, steps, started

    def _finder(self, principal: Principal) -> GraphEntityFinder | None:
        graph, caches = self.workspace.graph, self._caches
        if graph is None or caches is None:
            return None
        return GraphEntityFinder(graph.store, principal, names=caches.names)

    def _sources(self, ask: Ask) -> list[Callable[[Ask], Found]]:
        plan = ask.plan
        runs: list[Callable[[Ask], Found]] = []
        if plan.reads_conversation or plan.reads_episodic:
            runs.append(lambda a: conversation(a, self.memory))
        if plan.reads_episodic:
            runs.append(lambda a: past_jobs(a, self.jobs))
        if plan.searches_documents:
            runs.append(lambda a: documents(a, self.workspace))
        texts = self._caches.texts if self._caches is not None else None
        runs += graph_sources.for_plan(ask, self.workspace.graph, texts)
        return runs

    def _finish(
        self,
        req: RetrievalRequest,
        ask: Ask,
        founds: list[Found],
        steps: list[StepTrace],
        started: float,
    ) -> ContextBundle:
        job_id = uuid.uuid4().hex
        latency = (time.perf_counter() - started) * 1000
        bundle = assemble(ask, founds, job_id=job_id, steps=steps, latency_ms=latency)
        self.recorder.record(job_of(job_id, ask, bundle))
        return bundle

    def close(self) -> None:
        """Finish mirroring the logged jobs into the graph and stop the source threads (the
        workspace stays open)."""
        self.recorder.close()
        self._pool.shutdown(wait=True)
        for store in self._owned:  # the SQLite stores it opened itself
            store.close()


def _mirror(workspace: Workspace) -> GraphMemoryMirror | None:
    graph = workspace.graph
    if graph is None or not workspace.settings.memory_in_graph:
        return None
    return GraphMemoryMirror(graph.store)


def llm_classifier(workspace: Workspace) -> GroqClassifier | None:
    """The pre-query classifier: Groq when the settings hold a Groq key, else the workspace's
    LlamaIndex LLM (:meth:`~trilha.workspace.Workspace.use_llm`, else ``Settings.llm`` when
    set); None without any."""
    from trilha.llm.groq import groq_client
    from trilha.llm.llamaindex import chat_client

    settings = workspace.settings
    client = groq_client(settings)
    if client is not None:
        return GroqClassifier(client, settings.groq_model, settings.llm_timeout_s)
    chat = chat_client(workspace.llm)
    return GroqClassifier(chat, chat.model, settings.llm_timeout_s) if chat else None


def _check_project(request: RetrievalRequest, principal: Principal) -> None:
    if request.project_id is not None and request.project_id not in principal.project_ids:
        raise BadRequestError(
            f"user {request.user_id!r} is not a member of project {request.project_id!r}; "
            "ask without project_id or for one of their projects"
        )
