"""Aggregates of the retrieval job log (seed 004 REQ-RETR-017 and REQ-RETR-020), as pure
functions of the jobs.

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
from typing import TYPE_CHECKING

from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_PORTUGUESE
from pydantic import BaseModel, ConfigDict, Field

from trilha.index.tokenize import tokenize

if TYPE_CHECKING:
    from trilha.memory.jobs import RetrievalJob

#: Recurring patterns listed at most.
MAX_PATTERNS = 10
#: Question words the stopword lists keep but a pattern does not need.
QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "how", "when", "where", "why"}
    | {"quais", "qual", "quem", "como", "quando", "onde", "porque", "por", "que"}
    | {"quanto", "quantos", "quantas"}
)
_WORD = re.compile(r"\w+")
_DROPPED = QUESTION_WORDS | frozenset(STOPWORDS_EN) | frozenset(STOPWORDS_PORTUGUESE)


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
