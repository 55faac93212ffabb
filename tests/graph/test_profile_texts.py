"""Anchor texts kept per graph generation
(:class:`~trilha.graph.read.profile_query.AnchorTexts`): the folded texts name exactly the nodes
the Cypher terms filter passes, a walk narrowed by them returns what the plain walk returns for
every principal, and a write through the service is seen."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product
from typing import Any

import pytest

from tests.graph.conftest import SharedServerGraph
from tests.graph.profile_world import ANA, NOW, TODAY, write
from trilha.access import Principal
from trilha.config import load_profiles
from trilha.graph.build.records import NodeRecord
from trilha.graph.build.writer import GraphWriter
from trilha.graph.read.cache import GraphMemo
from trilha.graph.read.profile_query import AnchorTexts, LabelTexts, ProfileQuery, texts_statement
from trilha.graph.read.profile_walk import profile_walk
from trilha.graph.service import GraphService
from trilha.graph.stores.falkordb import EmbeddedFalkorServer, FalkorDBStore
from trilha.types import TextUnit

PROFILES = load_profiles().profiles
BRUNO = Principal(user_id="u-bruno", org_ids=["acme"], hierarchy_level=1)
CARLA = Principal(user_id="u-carla", org_ids=["beta"], hierarchy_level=1)
BOARD = Principal(user_id="u-board", org_ids=["acme"], hierarchy_level=3)
CALLERS = (ANA, BRUNO, CARLA, BOARD, None)
TERMS = (
    ("lgpd",),
    ("Relatório",),
    ("relatorio", "beta"),
    ("privacidade", "board"),
    ("ana", "souza"),
    ("consentimento",),
    ("crm",),
    ("nada disso",),
)


def rows(*texts: tuple[Any, str]) -> list[dict[str, Any]]:
    return [{"props": {"id": i, "title": t}, "txt": t.lower()} for i, t in texts]


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        (["cafe"], ["a", "c"]),  # "Café" folds to "cafe"
        (["cafe", "lgpd"], ["a", "b", "c"]),
        (["ção"], []),  # terms come folded: an accented term matches nothing
        (["cao"], ["b"]),
        ([], []),
        ([""], []),
    ],
)
def test_label_texts_match_folded_terms_once_per_node(
    terms: list[str], expected: list[str]
) -> None:
    texts = LabelTexts.of(rows(("a", "Café café"), ("b", "LGPD: adequação"), ("c", "o CAFE")))
    assert texts.usable and texts.matching(terms) == expected
    assert texts.props["b"] == {"id": "b", "title": "LGPD: adequação"}


@pytest.mark.parametrize(
    "bad",
    [
        rows(("a", "x"), ("a", "y")),  # two nodes, one id
        [{"props": {"id": 7, "title": "x"}, "txt": "x"}],  # not a string id
        [{"props": {"title": "x"}, "txt": "x"}],  # no id
        rows(("a", "x\x00y")),  # NUL inside a text
    ],
)
def test_a_label_whose_nodes_cannot_be_told_apart_is_not_narrowed(
    bad: list[dict[str, Any]],
) -> None:
    assert not LabelTexts.of(bad).usable


@pytest.fixture(scope="module")
def world(falkordb_server: EmbeddedFalkorServer) -> Iterator[FalkorDBStore]:
    store = SharedServerGraph(falkordb_server)
    write(store)
    units = [
        TextUnit(unit_id="d1#0", doc_id="d1", text="x", ordinal=0, title="Relatório LGPD"),
        TextUnit(
            unit_id="d2#0",
            doc_id="d2",
            text="y",
            ordinal=0,
            title="Consentimento e LGPD (privado)",
            visibility="private",
            owner_id="u-bruno",
        ),
        TextUnit(unit_id="d3#0", doc_id="d3", text="z", ordinal=0, title="Beta CRM notes"),
    ]
    GraphWriter(store).upsert_units(units)
    yield store
    store.close()


def test_the_texts_are_those_the_terms_filter_folds(world: FalkorDBStore) -> None:
    rows = world.run(texts_statement("Task"), {})
    texts = LabelTexts.of(rows)
    assert "t-dpia" in texts.matching(["relatorio"])  # "Relatório de impacto (RIPD) do CRM"
    assert texts.matching(["relatorio"]) == texts.matching(["ripd"])


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_a_narrowed_walk_returns_what_the_plain_walk_returns(
    world: FalkorDBStore, name: str
) -> None:
    profile = PROFILES[name]
    texts = AnchorTexts(GraphMemo(lambda: 0))
    for label in profile.anchors:  # every anchor label here can be narrowed
        assert texts.candidates(world, label, ["lgpd"]) is not None, label
    for terms, caller in product(TERMS, CALLERS):
        query = ProfileQuery(today=TODAY, now=NOW, terms=terms)
        for budget in (3, 500):
            plain = profile_walk(world, profile, query, principal=caller, max_nodes_scanned=budget)
            narrowed = profile_walk(
                world, profile, query, principal=caller, max_nodes_scanned=budget, texts=texts
            )
            assert narrowed == plain, (name, terms, caller, budget)


def test_a_write_through_the_service_is_seen_by_the_next_walk(
    falkordb_server: EmbeddedFalkorServer,
) -> None:
    service = GraphService(SharedServerGraph(falkordb_server))
    try:
        write(service.store)
        texts = AnchorTexts(GraphMemo(lambda: service.generation))
        query = ProfileQuery(today=TODAY, now=NOW, terms=("anonimização",))
        process = PROFILES["process_state"]

        def found() -> list[str]:
            walk = profile_walk(service.store, process, query, principal=ANA, texts=texts)
            return [h.node_id for h in walk.hits]

        assert found() == []
        task = {"title": "Política de anonimização", "visibility": "org", "org_id": "acme"}
        service.write_records([NodeRecord(label="Task", id="t-anon", props=task)])
        assert found() == ["Task:t-anon"]
    finally:
        service.close()
