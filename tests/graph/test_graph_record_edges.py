"""Record edges that share a node, written on both backends (ArcadeDB refuses two new edges on
one vertex in one statement, so the Bolt path writes them in rounds)."""

from __future__ import annotations

from trilha.graph.build.records import parse_records
from trilha.graph.build.writer import GraphWriter, disjoint_rounds
from trilha.graph.stores.base import GraphStore


def test_many_tasks_into_one_project_and_one_user(store: GraphStore) -> None:
    rows: list[dict[str, object]] = [
        {"kind": "node", "label": "Project", "id": "p1", "props": {"title": "P"}},
        {"kind": "node", "label": "User", "id": "u1", "props": {"name": "U"}},
    ]
    for i in range(5):
        rows.append({"kind": "node", "label": "Task", "id": f"t{i}", "props": {"title": f"T{i}"}})
        rows.append(
            {"kind": "edge", "type": "BELONGS_TO", "source": f"Task:t{i}", "target": "Project:p1"}
        )
        rows.append(
            {"kind": "edge", "type": "ASSIGNED_TO", "source": f"Task:t{i}", "target": "User:u1"}
        )
    stats = GraphWriter(store).write_records(
        parse_records((f"r:{i}", r) for i, r in enumerate(rows))
    )
    assert (stats.nodes, stats.edges) == (7, 10)
    found = store.run("MATCH (t:Task)-[:BELONGS_TO]->(p:Project {id: 'p1'}) RETURN count(t) AS n")
    assert found[0]["n"] == 5


def test_rounds_never_share_a_node_and_keep_every_edge() -> None:
    rows = [{"source": s, "target": t} for s, t in [("a", "p"), ("b", "p"), ("a", "q"), ("c", "r")]]
    rounds = disjoint_rounds(rows)
    assert sorted(str(row) for round_ in rounds for row in round_) == sorted(map(str, rows))
    for round_ in rounds:
        ends = [x for row in round_ for x in (row["source"], row["target"])]
        assert len(ends) == len(set(ends))
    assert rounds[0] == [rows[0], rows[3]]
