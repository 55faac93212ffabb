"""The retrieval job log: exact statistics on a synthetic log, privacy of ``recent``, and
writers in several threads and processes (one of them killed) leave a sound database."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.memory.conftest import T0
from tests.memory.jobs_helpers import PLAN, job
from trilha.memory.jobs import JobLog, RecurringPattern, nearest_rank, pattern_key
from trilha.memory.store import MEMORY_FILE, MemoryStore


@pytest.fixture
def log(memory_at: Path | str) -> JobLog:
    """The 20 jobs of :data:`PLAN`: even ones asked by ana, odd ones by bia (in SQLite, then on
    PostgreSQL)."""
    jobs = JobLog(memory_at)
    for i in range(len(PLAN)):
        jobs.record(job(i, "ana" if i % 2 == 0 else "bia"))
    return jobs


@pytest.mark.parametrize(
    ("values", "p95"),
    [([], None), ([7], 7), ([3, 1, 2], 3), (list(range(1, 21)), 19), (list(range(1, 101)), 95)],
)
def test_nearest_rank_p95(values: list[int], p95: int | None) -> None:
    assert nearest_rank(values, 0.95) == p95


def test_stats_of_the_synthetic_log(log: JobLog) -> None:
    stats = log.stats()
    assert stats.jobs == 20
    assert stats.success_rate == 16 / 20  # jobs 2, 7, 12, 17 failed
    assert stats.mean_latency_ms == 10.5  # latencies 1..20
    assert stats.p95_latency_ms == 19  # rank ceil(0.95 * 20) = 19
    assert stats.by_strategy == {
        "graph_only": 8,
        "hybrid_semantic_graph": 4,
        "keyword_only": 2,
        "vector_rag": 6,
    }
    assert stats.errors_by_strategy == {
        "graph_only": 4,
        "hybrid_semantic_graph": 0,
        "keyword_only": 0,
        "vector_rag": 0,
    }
    assert stats.by_intent == {
        "factual": 8,
        "graph_insight": 6,
        "organizational": 2,
        "orientation": 4,
    }
    assert stats.recurring_patterns == [
        RecurringPattern(pattern="lgpd", count=6, users=2, example="LGPD?"),
        RecurringPattern(
            pattern="atras taref", count=6, users=2, example="Quais tarefas estão atrasadas"
        ),
        RecurringPattern(pattern="own rop", count=2, users=1, example="Who owns the ROPA?"),
        RecurringPattern(pattern="prioriz seman", count=2, users=1, example="priorizar semana"),
        RecurringPattern(
            pattern="deveriam prioriz seman",
            count=2,
            users=1,
            example="O que deveríamos priorizar esta semana?",
        ),
    ]  # the two one-off questions (jobs 9 and 19) are no pattern


def test_stats_since_a_time(log: JobLog) -> None:
    stats = log.stats(since=T0 + timedelta(minutes=10))  # jobs 10..19
    assert (stats.jobs, stats.success_rate) == (10, 0.8)
    assert (stats.mean_latency_ms, stats.p95_latency_ms) == (15.5, 20)  # rank ceil(9.5) = 10
    empty = log.stats(since=T0 + timedelta(days=1))
    assert empty.jobs == 0 and empty.success_rate is None and empty.p95_latency_ms is None
    assert empty.recurring_patterns == [] and empty.by_strategy == {}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Quais tarefas estão atrasadas?", "tarefas atrasadas, quais são"),
        ("What tasks are late?", "late task"),
        ("LGPD", "o que é a LGPD?"),
    ],
)
def test_rewordings_share_a_pattern(a: str, b: str) -> None:
    assert pattern_key(a) == pattern_key(b) != ""


def test_recent_returns_the_callers_own_jobs_newest_first(log: JobLog) -> None:
    assert [j.id for j in log.recent("ana", 3)] == ["job-18", "job-16", "job-14"]
    assert {j.user_id for j in log.recent("bia", 100)} == {"bia"}
    assert len(log.recent("bia", 100)) == 10
    assert log.recent("carla") == []
    again = log.recent("ana", 1)[0]
    assert again == job(18, "ana")  # every field comes back as recorded


def test_recording_a_job_again_replaces_it(log: JobLog) -> None:
    log.record(job(0, "ana", error_code="budget"))
    assert log.stats().jobs == 20
    assert [j.error_code for j in log.recent("ana", 100) if j.id == "job-00"] == ["budget"]


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"depth_level": "D5"}, "depth_level"),
        ({"created_at": T0.replace(tzinfo=None)}, "created_at"),
        ({"latency_ms": -1}, "latency_ms"),
        ({"user_id": " "}, "user_id"),
    ],
)
def test_a_malformed_job_is_refused(over: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        job(0, "ana", **over)


_CHILD = """
import sys
from datetime import UTC, datetime
from trilha.memory.jobs import JobLog, RetrievalJob

log = JobLog(sys.argv[1])
count = int(sys.argv[2])
i = 0
while count < 0 or i < count:
    log.record(RetrievalJob(
        id=f"child-{i}", user_id="child", conversation_id="c", agent_type="task",
        raw_query=f"question {i}", retrieval_intent="factual", strategy_used="vector_rag",
        nodes_scanned=1, nodes_returned=1, depth_used=2, tokens_estimated=10, latency_ms=i,
        created_at=datetime.now(UTC), depth_level="D2", scope_key="k"))
    i += 1
    if i % 50 == 0:
        print(i, flush=True)
"""


def _child(path: Path, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(count)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _sound(path: Path) -> None:
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_process_and_threads_writing_together_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / MEMORY_FILE
    log, memory = JobLog(path), MemoryStore(path)
    child = _child(path, 200)

    def turns() -> None:
        for i in range(100):
            memory.record_turn("ana", "c", "user", f"turn {i}")

    writer = threading.Thread(target=turns)
    writer.start()
    for i in range(200):
        log.record(job(i % 20, "ana", id=f"parent-{i}"))
    writer.join()
    assert child.wait(timeout=120) == 0
    _sound(path)
    assert log.stats().jobs == 400
    assert len(log.recent("child", 1000)) == 200 and len(memory.turns("ana", limit=1000)) == 100


def test_a_writer_killed_midway_leaves_a_sound_log(tmp_path: Path) -> None:
    path = tmp_path / MEMORY_FILE
    JobLog(path).close()
    child = _child(path, -1)
    assert child.stdout is not None
    written = 0
    while written < 150:
        written = int(child.stdout.readline())
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    _sound(path)
    log = JobLog(path)
    stats = log.stats()  # every stored job parses back
    assert stats.jobs >= written and stats.by_strategy == {"vector_rag": stats.jobs}
