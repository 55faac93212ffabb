"""The RetrievalJob of one orchestrated retrieval (seed 004 REQ-RETR-003, REQ-RETR-016), and
where it is recorded: the workspace's job log, and the graph when there is one."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from trilha.access import scope_key
from trilha.errors import WorkspaceError
from trilha.graph.service import GraphService
from trilha.memory import JobGraphWriter, JobLog, RetrievalJob
from trilha.orchestrate.bundle import ContextBundle
from trilha.orchestrate.sources import Ask

logger = logging.getLogger(__name__)

#: Waits between attempts to copy the jobs the graph missed: from the first, doubling to the
#: last, and back to the first once every job got there.
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 30.0


def job_of(job_id: str, ask: Ask, bundle: ContextBundle) -> RetrievalJob:
    """The job record of ``bundle``: seed 004's fields, the pre-query and what was returned."""
    return RetrievalJob(
        id=job_id,
        user_id=ask.request.user_id,
        conversation_id=ask.request.conversation_id,
        agent_type=ask.request.agent_type,
        raw_query=ask.request.raw_query,
        rewritten_query=None,
        retrieval_intent=ask.pre.retrieval_intent,
        strategy_used=ask.plan.strategy,
        nodes_scanned=bundle.trace.limits.nodes_scanned,
        nodes_returned=len(bundle.context_items),
        depth_used=bundle.depth_used,
        tokens_estimated=bundle.tokens_estimated,
        latency_ms=round(bundle.trace.latency_ms),
        error_code=None,
        created_at=ask.now,
        depth_level=ask.plan.depth,
        query_profile_used=bundle.cdc_metadata.query_profile_used,
        prequery=ask.pre.model_dump(mode="json"),
        returned=tuple(item.item_id for item in bundle.context_items),
        scope_key=scope_key(ask.principal),
    )


class JobRecorder:
    """Logs each job in the workspace's SQLite log at once and, when there is a graph, mirrors
    it as a ``:RetrievalJob`` node with ``RETURNED`` links in a background thread, so the graph
    write never adds to a retrieval's latency. :meth:`flush` waits for the mirrors in flight.

    A mirror that fails (the graph is down) keeps the job in SQLite and its id in a backlog,
    with one warning per outage. The backlog is copied, oldest first, when a later mirror
    succeeds and by retries (:data:`RETRY_FIRST_S` doubling to :data:`RETRY_MAX_S`), so the jobs
    recorded while the graph was down reach it once it is back; a mirror is an upsert by id, so
    each job is there once. The backlog lives in this process: jobs still in it when the process
    ends stay in SQLite only."""

    def __init__(self, jobs: JobLog, graph: GraphService | None) -> None:
        self.jobs = jobs
        self._writer = JobGraphWriter(graph.store) if graph is not None else None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trilha-jobs")
        self._pending: list[Future[None]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._backlog: dict[str, None] = {}  # job ids, oldest first; the worker thread's alone
        self._delay_s = 0.0
        self._timer: threading.Timer | None = None

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def record(self, job: RetrievalJob) -> None:
        """Log ``job`` now; mirror it into the graph soon. After :meth:`close`, a
        :class:`~trilha.errors.WorkspaceError`."""
        with self._lock:  # so that close() cannot stop the pool between check and submit
            if self._closed:
                raise WorkspaceError(
                    "this orchestrator is closed; make a new Orchestrator(workspace)"
                )
            self.jobs.record(job)
            if self._writer is not None:
                self._submit(self._mirror, job)

    def _submit(self, task: Callable[..., None], *args: RetrievalJob) -> None:
        """Run ``task`` on the worker thread (the caller holds the lock)."""
        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(self._pool.submit(task, *args))

    def _mirror(self, job: RetrievalJob) -> None:
        self._backlog.pop(job.id, None)
        self._backlog[job.id] = None
        self._drain(job)

    def _drain(self, latest: RetrievalJob | None = None) -> None:
        """Copy the backlog into the graph, oldest first, until a copy fails."""
        assert self._writer is not None
        while self._backlog:
            job_id = next(iter(self._backlog))
            job = latest if latest is not None and latest.id == job_id else self.jobs.get(job_id)
            warning = None if job is None else self._writer.write(job)
            if warning:
                self._retry_later(len(self._backlog), warning)
                return
            del self._backlog[job_id]
        if self._delay_s:
            logger.info("the graph is back: the retrieval jobs recorded meanwhile are in it")
            self._delay_s = 0.0

    def _retry_later(self, waiting: int, warning: str) -> None:
        """Have the backlog copied again after the next wait, unless a retry is already due."""
        if self._timer is not None and self._timer.is_alive():
            return
        if not self._delay_s:
            logger.warning(
                "%d retrieval job(s) not mirrored into the graph yet (kept in SQLite, copied "
                "once it is back): %s", waiting, warning,
            )  # fmt: skip
        self._delay_s = min(max(2 * self._delay_s, RETRY_FIRST_S), RETRY_MAX_S)
        self._timer = threading.Timer(self._delay_s, self._retry)
        self._timer.daemon = True
        self._timer.start()

    def _retry(self) -> None:
        with self._lock:
            if not self._closed:
                self._submit(self._drain)

    def flush(self) -> None:
        """Wait until every job recorded so far is in the graph (or failed to get there)."""
        with self._lock:
            pending, self._pending = self._pending, []
        wait(pending)

    def close(self) -> None:
        """Flush, then stop the background thread; later records are refused."""
        with self._lock:
            self._closed = True
        self.flush()
        if self._timer is not None:
            self._timer.cancel()
        self._pool.shutdown(wait=True)
