"""The memory's graph mirror on the embedded FalkorDB: a :RetrievalJob node private to its user,
RETURNED links to the returned nodes that exist, :Memory nodes for turns, and a graph that
fails losing nothing from SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.graph.conftest import ENTITIES, UNITS
from tests.memory.conftest import StepClock
from tests.memory.jobs_helpers import job
from trilha.access import Principal
from trilha.access.cypher import visible_where
from trilha.graph.build.records import NodeRecord
from trilha.graph.build.writer import GraphWriter
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.memory.graph import GraphMemoryMirror, JobGraphWriter, returned_by_label
from trilha.memory.jobs import JobLog
from trilha.memory.store import MemoryStore

RETURNED = (
    "Chunk:guide/graphrag#0",
    "Chunk:stj/resp-1#0",
    "Task:t1",
    "Entity:Neo4j",  # a named label: stored as 'neo4j'
    "Chunk:gone#0",  # no such node
    "User:ana",  # RETURNED does not point to users
    "Nonsense",
)


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[GraphStore]:
    """The graph conftest's five units, a Task and a User, on the embedded FalkorDB."""
    store = FalkorDBStore.embedded(tmp_path / "falkordb")
    writer = GraphWriter(store)
    writer.upsert_units(UNITS, ENTITIES)
    writer.write_records([NodeRecord(label="Task", id="t1"), NodeRecord(label="User", id="ana")])
    yield store
    store.close()


def _seen_jobs(store: GraphStore, principal: Principal) -> list[str]:
    where, params = visible_where(principal, "j")
    rows = store.run(f"MATCH (j:RetrievalJob) WHERE {where} RETURN j.id AS id", params)
    return sorted(r["id"] for r in rows)


def test_refs_are_grouped_by_the_labels_returned_may_point_to() -> None:
    assert returned_by_label(RETURNED) == {
        "Chunk": ["guide/graphrag#0", "stj/resp-1#0", "gone#0"],
        "Task": ["t1"],
        "Entity": ["neo4j"],
    }


def test_a_job_node_links_what_exists_and_only_its_user_sees_it(
    graph: GraphStore, tmp_path: Path
) -> None:
    log = JobLog.in_workspace(tmp_path / "ws")
    mirror = JobGraphWriter(graph)
    recorded = job(0, "ana", returned=RETURNED)
    assert log.record(recorded, graph=mirror) is None
    assert log.record(recorded, graph=mirror) is None  # again: one node, the same edges
    assert mirror.linked("job-00") == [
        "Chunk:guide/graphrag#0",
        "Chunk:stj/resp-1#0",
        "Entity:neo4j",
        "Task:t1",
    ]
    node = graph.run("MATCH (j:RetrievalJob) RETURN properties(j) AS p")
    assert len(node) == 1
    props = node[0]["p"]
    assert (props["owner_id"], props["visibility"], props["user_id"]) == ("ana", "private", "ana")
    assert props["raw_query"] == "Quais tarefas estão atrasadas?"
    assert props["created_at"] == "2025-06-02T09:00:00.000000+00:00"
    assert props["returned"] == list(RETURNED) and "error_code" not in props
    assert '"focus_entities": ["Task"]' in props["prequery_json"]
    assert _seen_jobs(graph, Principal(user_id="ana")) == ["job-00"]
    boss = Principal(user_id="boss", hierarchy_level=9, clearance=9, roles=["admin"])
    assert _seen_jobs(graph, boss) == []
    assert _seen_jobs(graph, Principal.anonymous()) == []


def test_every_mirror_write_tells_the_cache_first(graph: GraphStore) -> None:
    told: list[int] = []
    mirror = JobGraphWriter(graph, changed=lambda: told.append(len(told)))
    mirror.write(job(1, "bia"))
    mirror.write(job(2, "ana"))
    assert told == [0, 1]
    service = GraphService(graph)
    assert JobGraphWriter.for_service(service).changed == service.memory_changed


def test_a_graph_that_fails_loses_nothing_from_sqlite(tmp_path: Path) -> None:
    store = FalkorDBStore.embedded(tmp_path / "falkordb")
    mirror = JobGraphWriter(store)
    store.close()  # the server is gone
    log = JobLog.in_workspace(tmp_path / "ws")
    warning = log.record(job(3, "ana"), graph=mirror)
    assert warning is not None and warning.startswith("graph mirror of retrieval job job-03")
    assert "kept in SQLite only" in warning and "\n" not in warning
    assert [j.id for j in log.recent("ana")] == ["job-03"]


def test_turns_are_mirrored_as_private_episodic_memories(graph: GraphStore, tmp_path: Path) -> None:
    memory = MemoryStore.in_workspace(
        tmp_path / "ws", clock=StepClock(), mirror=GraphMemoryMirror(graph)
    )
    turn = memory.record_turn("ana", "c1", "user", "Quais tarefas?", project_id="p1")
    rows = graph.run("MATCH (m:Memory) RETURN m.id AS id, properties(m) AS p")
    assert [r["id"] for r in rows] == [turn.turn_id]
    props = rows[0]["p"]
    assert (props["owner_id"], props["visibility"], props["memory_class"]) == (
        "ana",
        "private",
        "episodic",
    )
    assert (props["text"], props["source_ref"], props["project_id"]) == (
        "Quais tarefas?",
        "conversation:c1",
        "p1",
    )
    where, params = visible_where(Principal(user_id="bia", project_ids=["p1"]), "m")
    assert graph.run(f"MATCH (m:Memory) WHERE {where} RETURN m.id AS id", params) == []
