"""Profile walks (seed 004 US2/US3, REQ-RETR-007/008/019/024/025) on both backends, over the
small organisation of :mod:`tests.graph.profile_world`: exact hits, links, limits and filters."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from tests.graph.conftest import BACKENDS, SharedServerGraph, bolt_store
from tests.graph.profile_world import ANA, NOW, TODAY, write
from trilha.access import Principal
from trilha.config import QueryProfile, load_profiles
from trilha.errors import BadRequestError
from trilha.graph.read.profile_query import ProfileQuery
from trilha.graph.read.profile_reads import priority_items, strategy_items
from trilha.graph.read.profile_walk import ProfileWalkResult, profile_walk
from trilha.graph.stores.base import GraphStore
from trilha.graph.stores.falkordb import EmbeddedFalkorServer

PROFILES = load_profiles().profiles
PROCESS = PROFILES["process_state"]
STRATEGY = PROFILES["strategy_alignment"]
US2 = ProfileQuery(today=TODAY, labels=("Task",), org_ids=("acme",), overdue=True)


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    if request.param == "falkordb":
        store: GraphStore = SharedServerGraph(request.getfixturevalue("falkordb_server"))
    else:
        store = bolt_store(request.getfixturevalue("arcadedb"))
    write(store)
    yield store
    store.close()


def ids(result: ProfileWalkResult) -> list[str]:
    return [h.node_id for h in result.hits]


def links(result: ProfileWalkResult, hit: str) -> list[tuple[str, str, str, int, str | None]]:
    found = next(h for h in result.hits if h.node_id == hit)
    return [(x.rel_type, x.direction, x.other_id, x.hops, x.via) for x in found.links]


def every_id(result: ProfileWalkResult) -> set[str]:
    return {h.node_id for h in result.hits} | {
        i for h in result.hits for x in h.links for i in (x.other_id, x.via) if i
    }


def test_us2_late_tasks_of_my_startup_with_their_projects(world: GraphStore) -> None:
    result = profile_walk(world, PROCESS, US2, principal=ANA, limit=10)
    assert ids(result) == ["Task:t-dpia", "Task:t-ropa"]  # Ana owns t-dpia: it ranks first
    assert links(result, "Task:t-ropa") == [
        ("ASSIGNED_TO", "out", "User:u-bruno", 1, None),
        ("BELONGS_TO", "out", "Project:p-lgpd", 1, None),
        ("DEPENDS_ON", "in", "Task:t-dpia", 1, None),
        ("BELONGS_TO", "out", "Org:org-acme", 2, "Project:p-lgpd"),
    ]
    assert links(result, "Task:t-dpia") == [
        ("ASSIGNED_TO", "out", "User:u-ana", 1, None),
        ("BELONGS_TO", "out", "Project:p-lgpd", 1, None),
        ("DEPENDS_ON", "out", "Task:t-ropa", 1, None),
        ("ASSIGNED_TO", "out", "User:u-bruno", 2, "Task:t-ropa"),
        ("BELONGS_TO", "out", "Org:org-acme", 2, "Project:p-lgpd"),
    ]
    top = result.hits[0]
    assert top.reason == "late Task of Project:p-lgpd"
    assert top.props["due_date"] == "2026-01-25" and top.props["status"] == "open"
    # 1 + overdue 0.5 + recency 0.25/(1 + 12/30) + owned by Ana 0.5
    assert top.score == pytest.approx(1 + 0.5 + 0.25 / 1.4 + 0.5, abs=1e-6)
    assert result.filters_applied == ("visibility", "scope", "overdue")
    assert (result.candidates, result.truncated, result.warnings) == (2, False, ())
    assert result.nodes_scanned >= 2


def test_hidden_nodes_never_appear_and_are_never_walked_through(world: GraphStore) -> None:
    """t-private (Bruno's), t-board (level 3) and t-beta (org beta) are late too; t-deep is
    reachable from t-dpia only through t-private."""
    everything = profile_walk(world, PROCESS, ProfileQuery(today=TODAY), principal=ANA, limit=50)
    seen = every_id(everything)
    assert not seen & {"Task:t-private", "Task:t-board", "Task:t-beta", "Project:p-board"}
    assert "Task:t-deep" in seen  # a hit of its own, Ana sees it
    dpia = {x.other_id for h in everything.hits if h.node_id == "Task:t-dpia" for x in h.links}
    assert "Task:t-deep" not in dpia
    bruno = Principal(user_id="u-bruno", org_ids=["acme"], hierarchy_level=1)
    his = profile_walk(world, PROCESS, US2, principal=bruno)
    assert ids(his) == ["Task:t-private", "Task:t-ropa"]  # not t-dpia: level 2
    assert "Task:t-deep" in {x.other_id for x in his.hits[0].links}


def test_without_scope_a_public_task_of_another_org_is_late_too(world: GraphStore) -> None:
    query = ProfileQuery(today=TODAY, labels=("Task",), overdue=True)
    assert set(ids(profile_walk(world, PROCESS, query, principal=ANA))) == {
        "Task:t-dpia",
        "Task:t-ropa",
        "Task:t-beta-pub",
    }


def test_only_the_profiles_relationships_are_followed(world: GraphStore) -> None:
    """t-ropa REFERENCES Entity:LGPD and ALIGNS_WITH an OKR: neither is in process_state."""
    result = profile_walk(world, PROCESS, US2, principal=ANA)
    types = {x.rel_type for h in result.hits for x in h.links}
    assert types == {"ASSIGNED_TO", "BELONGS_TO", "DEPENDS_ON"}
    assert not {i for i in every_id(result) if i.startswith(("Entity:", "OKR:"))}


def test_max_hops_bounds_the_walk(world: GraphStore) -> None:
    one_hop = QueryProfile.model_validate({**PROCESS.model_dump(), "max_hops": 1})
    result = profile_walk(world, one_hop, US2, principal=ANA)
    assert {x.hops for h in result.hits for x in h.links} == {1}
    assert "Org:org-acme" not in every_id(result)


def test_the_budget_cuts_the_scan_and_says_so(world: GraphStore) -> None:
    result = profile_walk(world, PROCESS, US2, principal=ANA, max_nodes_scanned=1)
    assert ids(result) == ["Task:t-ropa"]  # most recently updated first
    assert result.hits[0].links == ()  # nothing left to walk with
    assert (result.truncated, result.nodes_scanned, result.candidates) == (True, 1, 1)
    assert result.warnings == ("max_nodes_scanned 1 reached; more nodes may match",)
    walk_cut = profile_walk(world, PROCESS, US2, principal=ANA, max_nodes_scanned=4)
    assert walk_cut.truncated and walk_cut.nodes_scanned == 4 and len(walk_cut.hits) == 2
    # the scan gets half the budget, so many anchors still leave the walk some
    many = profile_walk(
        world, PROCESS, ProfileQuery(today=TODAY), principal=ANA, limit=1, max_nodes_scanned=10
    )
    assert (many.candidates, many.truncated) == (5, True)
    assert many.hits[0].links and many.nodes_scanned == 10


def test_limit_keeps_the_best(world: GraphStore) -> None:
    result = profile_walk(world, PROCESS, US2, principal=ANA, limit=1)
    assert ids(result) == ["Task:t-dpia"] and result.candidates == 2


def test_filters_by_status_window_priority_owner_and_terms(world: GraphStore) -> None:
    def walk(**fields: object) -> set[str]:
        query = ProfileQuery.model_validate({"today": TODAY, "labels": ("Task",), **fields})
        return set(ids(profile_walk(world, PROCESS, query, principal=ANA, limit=50)))

    assert walk(statuses=("LATE",)) == {"Task:t-ropa", "Task:t-beta-pub"}
    assert walk(due_from=TODAY, due_to=date(2026, 2, 8)) == {"Task:t-soon"}
    assert walk(due_to=date(2026, 1, 10)) == {"Task:t-ropa", "Task:t-done", "Task:t-beta-pub"}
    assert walk(priority_only=True) == {"Task:t-soon", "Task:t-done"}
    assert walk(owner_ids=("u-ana",)) == {"Task:t-dpia"}
    assert walk(terms=("relatorio",)) == {"Task:t-dpia"}  # accents folded: Relatório
    assert walk(terms=("OPERAÇÕES", "auditoria")) == {"Task:t-ropa", "Task:t-far"}
    assert walk(terms=("x' OR 1=1 //", "`Task`", '") RETURN n //')) == set()


def test_strategy_items_are_valid_today_with_what_aligns_with_them(world: GraphStore) -> None:
    result = strategy_items(world, STRATEGY, principal=ANA, today=TODAY)
    assert set(ids(result)) == {
        "OKR:okr-2026",
        "StrategicObjective:so-privacy",
        "Purpose:pur-trust",
    }
    assert "validity" in result.filters_applied
    okr = links(result, "OKR:okr-2026")
    assert okr[:3] == [
        ("ALIGNS_WITH", "in", "Project:p-lgpd", 1, None),
        ("ALIGNS_WITH", "out", "StrategicObjective:so-privacy", 1, None),
        ("ALIGNS_WITH", "in", "Task:t-dpia", 1, None),
    ]
    assert ("ALIGNS_WITH", "out", "Purpose:pur-trust", 2, "StrategicObjective:so-privacy") in okr
    assert next(h for h in result.hits if h.node_id == "OKR:okr-2026").reason == (
        "OKR aligned with StrategicObjective:so-privacy with 2 aligned items"
    )
    seen = every_id(result)
    assert not seen & {"OKR:okr-2025", "OKR:okr-secret", "Task:t-board", "Task:t-private"}


def test_validity_is_the_profiles_choice(world: GraphStore) -> None:
    lax = QueryProfile.model_validate({**STRATEGY.model_dump(), "require_validity": False})
    result = profile_walk(world, lax, ProfileQuery(today=TODAY, labels=("OKR",)), principal=ANA)
    assert set(ids(result)) == {"OKR:okr-2026", "OKR:okr-2025"}
    assert "validity" not in result.filters_applied


def test_visibility_applies_even_when_the_profile_does_not_require_rbac(world: GraphStore) -> None:
    open_profile = QueryProfile.model_validate({**PROCESS.model_dump(), "require_rbac": False})
    result = profile_walk(world, open_profile, US2, principal=Principal())
    assert ids(result) == [] and result.filters_applied[0] == "visibility"


def test_priority_items(world: GraphStore) -> None:
    result = priority_items(world, principal=ANA, today=TODAY, now=NOW)
    # not t-done (high, but closed), okr-2025 (flagged, but expired), t-private (Bruno's)
    assert set(ids(result)) == {"Project:p-lgpd", "Process:proc-onb", "Task:t-soon"}
    assert result.filters_applied == ("visibility", "validity", "priority", "open")
    soon = links(result, "Task:t-soon")
    assert soon == [("BELONGS_TO", "out", "Project:p-lgpd", 1, None)]
    assert next(h for h in result.hits if h.node_id == "Task:t-soon").reason == (
        "priority Task of Project:p-lgpd"
    )
    lgpd = {x.other_id for x in next(h for h in result.hits if h.node_id == "Project:p-lgpd").links}
    assert {"Org:org-acme", "OKR:okr-2026", "Task:t-ropa"} <= lgpd
    assert not lgpd & {"Task:t-private"}


def test_a_label_outside_the_profile_is_refused(world: GraphStore) -> None:
    with pytest.raises(BadRequestError, match="'OKR' is not an anchor of profile 'process_state'"):
        profile_walk(world, PROCESS, ProfileQuery(today=TODAY, labels=("OKR",)), principal=ANA)


def test_the_sample_organisation(falkordb_server: EmbeddedFalkorServer) -> None:
    """US2 over the shipped sample records, as the demo ingests them."""
    from trilha.graph.build.records import load_records
    from trilha.graph.build.writer import GraphWriter

    samples = (
        Path(__file__).parents[2] / "plugin" / "trilha" / "samples" / "graph" / "records.jsonl"
    )
    store = SharedServerGraph(falkordb_server)
    try:
        GraphWriter(store).write_records(
            [r for r in load_records(samples) if "Doc:" not in r.model_dump_json()]
        )
        bruno = Principal(user_id="u-bruno", org_ids=["acme"], hierarchy_level=1)
        query = ProfileQuery(today=TODAY, labels=("Task",), org_ids=("acme",), overdue=True)
        result = profile_walk(store, PROCESS, query, principal=bruno)
        assert ids(result) == ["Task:t-ropa"]
        assert ("BELONGS_TO", "out", "Project:p-lgpd", 1, None) in links(result, "Task:t-ropa")
    finally:
        store.close()


def test_the_service_caches_per_scope(world: GraphStore) -> None:
    from trilha.graph.service import GraphService

    service = GraphService(world)
    first = service.profile_walk(PROCESS, US2, principal=ANA)
    assert [h.node_id for h in first.hits] == ["Task:t-dpia", "Task:t-ropa"]
    assert service.profile_walk(PROCESS, US2, principal=ANA) == first
    assert service.profile_walk(PROCESS, US2, principal=Principal()).hits == ()
    assert len(service._reads.cache) == 2
    assert [h.node_id for h in service.priority_items(today=TODAY, principal=ANA).hits]
    assert service.search_claims(["lgpd"], now=NOW, principal=Principal()).hits[0].node_id == (
        "Claim:c-low"
    )
