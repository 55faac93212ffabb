"""What the orchestrator keeps of the graph between requests (:mod:`trilha.orchestrate
.graph_caches`): titled names per visibility and generation, never one principal's names for
another, and a write through the graph service seen at the next request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from trilha.access import Principal
from trilha.graph.build.records import NodeRecord
from trilha.graph.read.cache import GraphMemo
from trilha.graph.service import GraphService
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.orchestrate.graph_caches import GraphCaches
from trilha.orchestrate.prequery import GraphEntityFinder

ANA = Principal(user_id="ana")
BOB = Principal(user_id="bob", org_ids=["acme"])
QUESTION = "Como vai o projeto Fênix e o projeto Atlas?"


@pytest.fixture()
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphService]:
    graph = GraphService(FalkorDBStore.embedded(tmp_path_factory.mktemp("caches") / "falkordb"))
    private = {"title": "Fênix", "visibility": "private", "owner_id": "ana"}
    graph.write_records(
        [
            NodeRecord(label="Project", id="p-atlas", props={"title": "Atlas"}),
            NodeRecord(label="Project", id="p-fenix", props=private),
        ]
    )
    yield graph
    graph.close()


def names(graph: GraphService, caches: GraphCaches, who: Principal) -> list[str | None]:
    finder = GraphEntityFinder(graph.store, who, names=caches.names)
    return [e.node_id for e in finder.find(QUESTION)]


@pytest.mark.parametrize("first", [ANA, BOB])
def test_one_principals_titles_never_serve_another(service: GraphService, first: Any) -> None:
    caches = GraphCaches.of(service)
    assert caches is not None
    second = BOB if first is ANA else ANA
    for who in (first, second, first):
        expected = ["Project:p-fenix", "Project:p-atlas"] if who is ANA else ["Project:p-atlas"]
        assert names(service, caches, who) == expected
    assert names(service, caches, BOB) == [
        e.node_id for e in GraphEntityFinder(service.store, BOB).find(QUESTION)
    ]


def test_titles_follow_the_graph_generation(service: GraphService) -> None:
    caches = GraphCaches.of(service)
    assert caches is not None
    assert names(service, caches, BOB) == ["Project:p-atlas"]
    public = {"title": "Fênix", "visibility": "public"}
    service.write_records([NodeRecord(label="Project", id="p-fenix", props=public)])
    assert names(service, caches, BOB) == ["Project:p-fenix", "Project:p-atlas"]


def test_a_value_computed_across_a_write_is_not_kept() -> None:
    generation = [0]
    memo: GraphMemo[int] = GraphMemo(lambda: generation[0])
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        generation[0] += 1  # a write lands while the value is read
        return len(calls)

    assert memo.get("k", compute) == 1
    assert memo.get("k", compute) == 2  # the first was not kept: read again
    assert memo.get("k", lambda: 99) == 99  # nor the second; this one is
    assert memo.get("k", compute) == 99


def test_no_graph_no_caches() -> None:
    assert GraphCaches.of(None) is None
