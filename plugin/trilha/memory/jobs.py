"""The retrieval job log (seed 004 REQ-RETR-003, 016, 017, 020): one :class:`RetrievalJob` per
request, in SQLite, and the aggregates of the log.

By default the log shares the workspace's ``memory.sqlite`` with the turns
(:data:`~trilha.memory.store.MEMORY_FILE`), in its own ``jobs`` table (schema version under
``jobs_schema`` in ``meta``). A job is the whole model as JSON plus the columns the reads filter
and group on. Jobs are personal like turns: :meth:`JobLog.recent` returns the caller's own;
:meth:`JobLog.stats` aggregates over everyone (an operator's view, :func:`job_stats`).

The aggregates (REQ-RETR-017 and REQ-RETR-020) are pure functions of the jobs:

* ``success_rate``: the share of jobs without an ``error_code``;
* ``mean_latency_ms``: the mean over every job, failed ones included;
* ``p95_latency_ms``: the nearest-rank 95th percentile: sort the latencies and take the one at
  rank ``ceil(0.95 * n)`` (1-based), so it is always a latency that was observed;
* ``errors_by_strategy``: failed jobs per ``strategy_used`` (every strategy seen, 0 included);
* ``recurring_patterns``: queries that come back. A query's pattern is the sorted set of its
  content-word stems (:func:`pattern_key`: question words and English and Portuguese stopwords
  out, then the lexical index's English and Portuguese stemmers one after the other, applied to
  every query alike, whatever its language), so "Quais tarefas estão atrasadas?" and "tarefas
  atrasadas quais são" are one pattern, and so are "late tasks" and "What task is late?".
  Patterns of two jobs or more are listed, most frequent first (then most recent), at most
  :data:`MAX_PATTERNS`, each with its count, how many distinct users asked it and its most
  recent query as the example.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from trilha.index.sql_store import SQLStore
from trilha.index.tokenize import STOPWORDS, tokenize
from trilha.memory.store import check_schema, opening, workspace_memory
from trilha.memory.turns import aware_utc, check_name, name_problem, stamp

#: Version of the ``jobs`` table.
JOBS_SCHEMA = 1
_DEPTH = re.compile(r"^D[0-4]$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, user_id TEXT NOT NULL,
    created_at TEXT NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_user ON jobs(user_id, created_at);
CREATE INDEX IF NOT EXISTS jobs_time ON jobs(created_at);
"""


class RetrievalJob(BaseModel):
    """One retrieval request as it ran: seed 004's ``:RetrievalJob`` fields, plus the depth
    level, the Query Profile, the pre-query result, what was returned and the caller's scope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Unique id of the job.")
    user_id: str = Field(description="Who asked.")
    conversation_id: str = Field(description="The conversation the request came from.")
    agent_type: str = Field(description="'knowledge', 'task', 'user', ...")
    raw_query: str = Field(description="The question as asked.")
    rewritten_query: str | None = Field(None, description="The query actually searched, if other.")
    retrieval_intent: str = Field(description="'factual', 'graph_insight', 'orientation', ...")
    strategy_used: str = Field(description="'semantic_only', 'graph_only', 'hybrid_...', ...")
    nodes_scanned: int = Field(ge=0, description="Candidates looked at.")
    nodes_returned: int = Field(ge=0, description="Items in the bundle.")
    depth_used: int = Field(ge=0, description="Depth as a number (D2 → 2).")
    tokens_estimated: int = Field(ge=0, description="Tokens of the bundle.")
    latency_ms: int = Field(ge=0, description="Wall time of the request in milliseconds.")
    error_code: str | None = Field(None, description="Why it failed; None when it succeeded.")
    created_at: datetime = Field(description="When the request came in (aware, UTC).")
    depth_level: str = Field(description="CDC depth level, 'D0' … 'D4'.")
    query_profile_used: str | None = Field(None, description="The Query Profile, if any.")
    prequery: dict[str, JsonValue] = Field(
        default_factory=dict, description="The pre-query result as JSON (REQ-RETR-003)."
    )
    returned: tuple[str, ...] = Field(
        (), description="Refs of the items returned: 'Chunk:<unit_id>', 'Task:t-ropa', ..."
    )
    scope_key: str = Field(
        description="trilha.access.scope_key of the principal; never its attributes."
    )

    @field_validator("id", "user_id", "conversation_id")
    @classmethod
    def _named(cls, v: str) -> str:
        problem = name_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("depth_level")
    @classmethod
    def _depth(cls, v: str) -> str:
        if not _DEPTH.match(v):
            raise ValueError(f"{v!r} is not one of D0, D1, D2, D3, D4")
        return v

    _utc = field_validator("created_at")(aware_utc)


#: Recurring patterns listed at most.
MAX_PATTERNS = 10
#: Question words the stopword lists keep but a pattern does not need.
QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "how", "when", "where", "why"}
    | {"quais", "qual", "quem", "como", "quando", "onde", "porque", "por", "que"}
    | {"quanto", "quantos", "quantas"}
)
_WORD = re.compile(r"\w+")
_DROPPED = QUESTION_WORDS | frozenset(STOPWORDS["en"]) | frozenset(STOPWORDS["pt"])


class RecurringPattern(BaseModel):
    """A query pattern asked more than once."""

    model_config = ConfigDict(frozen=True)

    pattern: str = Field(description="Sorted content-word stems shared by the queries.")
    count: int = Field(description="Jobs whose query has this pattern.")
    users: int = Field(description="Distinct users who asked it.")
    example: str = Field(description="The most recent query with this pattern.")


class JobStats(BaseModel):
    """What ``trilha jobs stats`` prints (the module docstring defines each number)."""

    model_config = ConfigDict(frozen=True)

    jobs: int = Field(description="Jobs counted.")
    success_rate: float | None = Field(description="Share without error_code; None: no jobs.")
    mean_latency_ms: float | None = Field(description="Mean latency; None: no jobs.")
    p95_latency_ms: int | None = Field(description="Nearest-rank P95 latency; None: no jobs.")
    errors_by_strategy: dict[str, int] = Field(description="Failed jobs per strategy.")
    by_strategy: dict[str, int] = Field(description="Jobs per strategy.")
    by_intent: dict[str, int] = Field(description="Jobs per retrieval intent.")
    recurring_patterns: list[RecurringPattern] = Field(description="Queries that come back.")


def nearest_rank(values: Sequence[int], q: float) -> int | None:
    """The ``q``-quantile (0 < q <= 1) by the nearest-rank method; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def pattern_key(query: str) -> str:
    """The pattern of ``query``: its sorted, distinct content-word stems ('' when none)."""
    text = " ".join(w for w in _WORD.findall(query.casefold()) if w not in _DROPPED)
    stems = tokenize(" ".join(tokenize(text, "en")), "pt")
    return " ".join(sorted({s for s in stems if not s.isdigit()}))


def recurring_patterns(
    jobs: Sequence[RetrievalJob], top: int = MAX_PATTERNS
) -> list[RecurringPattern]:
    """Patterns of two jobs or more among ``jobs`` (given newest first)."""
    count: Counter[str] = Counter()
    users: dict[str, set[str]] = {}
    example: dict[str, str] = {}
    for job in jobs:
        key = pattern_key(job.raw_query)
        if key:
            count[key] += 1
            users.setdefault(key, set()).add(job.user_id)
            example.setdefault(key, job.raw_query)
    order = {key: i for i, key in enumerate(example)}  # first seen = most recent
    kept = sorted((k for k, n in count.items() if n >= 2), key=lambda k: (-count[k], order[k]))
    return [
        RecurringPattern(pattern=k, count=count[k], users=len(users[k]), example=example[k])
        for k in kept[:top]
    ]


def job_stats(jobs: Sequence[RetrievalJob]) -> JobStats:
    """The :class:`JobStats` of ``jobs`` (given newest first)."""
    latencies = [j.latency_ms for j in jobs]
    failed = [j for j in jobs if j.error_code is not None]
    by_strategy = Counter(j.strategy_used for j in jobs)
    errors = Counter(j.strategy_used for j in failed)
    return JobStats(
        jobs=len(jobs),
        success_rate=(len(jobs) - len(failed)) / len(jobs) if jobs else None,
        mean_latency_ms=sum(latencies) / len(latencies) if latencies else None,
        p95_latency_ms=nearest_rank(latencies, 0.95),
        errors_by_strategy={s: errors.get(s, 0) for s in sorted(by_strategy)},
        by_strategy=dict(sorted(by_strategy.items())),
        by_intent=dict(sorted(Counter(j.retrieval_intent for j in jobs).items())),
        recurring_patterns=recurring_patterns(jobs),
    )


class JobMirror(Protocol):
    """Where a recorded job is copied too (:class:`~trilha.memory.graph.JobGraphWriter`)."""

    def write(self, job: RetrievalJob) -> str | None:
        """Copy ``job``; None, or the warning of a copy that failed."""
        ...


class JobLog(SQLStore):
    """Retrieval jobs in the SQLite file at ``path`` (shared safely with a
    :class:`~trilha.memory.store.MemoryStore` on the same file)."""

    def __init__(self, path: Path | str) -> None:
        with opening(path):
            super().__init__(path, _SCHEMA)
            check_schema(self, "jobs_schema", JOBS_SCHEMA)

    @classmethod
    def in_workspace(cls, folder: Path | str, *, store_url: str | None = None) -> JobLog:
        """The log of the workspace at ``folder``: beside its unit store on PostgreSQL
        (``store_url``, else ``TRILHA_STORE_URL``), else in the folder (created if missing)."""
        return cls(workspace_memory(folder, store_url))

    def record(self, job: RetrievalJob, *, graph: JobMirror | None = None) -> str | None:
        """Store ``job`` (recording the same id again replaces it), then mirror it into
        ``graph`` when given; None, or the warning of a mirror that failed (the SQLite record
        stays)."""
        row = (job.id, job.user_id, stamp(job.created_at), job.model_dump_json())
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM jobs WHERE id = ?", (job.id,))
            self._db.execute(
                "INSERT INTO jobs (id, user_id, created_at, body) VALUES (?, ?, ?, ?)", row
            )
        return None if graph is None else graph.write(job)

    def _bodies(self, where: str, params: tuple[Any, ...], limit: int | None) -> list[str]:
        tail = "" if limit is None else f" LIMIT {max(0, int(limit))}"
        query = f"SELECT body FROM jobs WHERE {where} ORDER BY created_at DESC, seq DESC{tail}"
        with self._lock:
            return [r[0] for r in self._db.execute(query, params)]

    def get(self, job_id: str) -> RetrievalJob | None:
        """The job recorded as ``job_id``, if there is one."""
        bodies = self._bodies("id = ?", (job_id,), 1)
        return RetrievalJob.model_validate_json(bodies[0]) if bodies else None

    def recent(self, user_id: str, limit: int = 20) -> list[RetrievalJob]:
        """``user_id``'s own jobs, newest first (episodic memory of what they asked)."""
        bodies = self._bodies("user_id = ?", (check_name(user_id, "user_id"),), limit)
        return [RetrievalJob.model_validate_json(b) for b in bodies]

    def stats(self, *, since: datetime | None = None) -> JobStats:
        """Aggregates of every job (since ``since`` when given; see :func:`job_stats`)."""
        where, params = ("created_at >= ?", (stamp(since),)) if since else ("1 = 1", ())
        jobs = [RetrievalJob.model_validate_json(b) for b in self._bodies(where, params, None)]
        return job_stats(jobs)
