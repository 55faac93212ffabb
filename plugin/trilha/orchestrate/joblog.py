"""The RetrievalJob of one orchestrated retrieval (seed 004 REQ-RETR-003, REQ-RETR-016), and
where it is recorded: the workspace's job log, and the graph when there is one."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

from trilha.access import scope_key
from trilha.errors import WorkspaceError
from trilha.graph.service import GraphService
from trilha.memory import JobGraphWriter, JobLog, RetrievalJob
from trilha.orchestrate.bundle import ContextBundle
from trilha.orchestrate.sources import Ask

logger = logging.getLogger(__name__)


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
    """Logs each job in the workspace's SQLite log at once and, when the graph is up, mirrors it
    as a ``:RetrievalJob`` node with ``RETURNED`` links in a background thread, so the graph
    write never adds to a retrieval's latency. A failed mirror is logged; the SQLite record
    stays. :meth:`flush` waits for the mirrors in flight."""

    def __init__(self, jobs: JobLog, graph: GraphService | None) -> None:
        self.jobs = jobs
        self._writer = JobGraphWriter(graph.store) if graph is not None else None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trilha-jobs")
        self._pending: list[Future[None]] = []
        self._lock = threading.Lock()
        self._closed = False

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
                self._pending = [f for f in self._pending if not f.done()]
                self._pending.append(self._pool.submit(self._mirror, self._writer, job))

    @staticmethod
    def _mirror(writer: JobGraphWriter, job: RetrievalJob) -> None:
        warning = writer.write(job)
        if warning:
            logger.warning("retrieval job %s not mirrored into the graph: %s", job.id, warning)

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
        self._pool.shutdown(wait=True)
