"""Profile walks and claim search against an oracle, for random principals, on both backends.

The oracle knows the world's access fields (:mod:`tests.graph.profile_world`) and decides with
the pure rule :func:`trilha.access.visible`. For every drawn principal, profile and filter set:
every hit, link and ``via`` is visible; without filters the hits are exactly the visible (and,
when the profile says so, valid) anchors; and each hit's links are exactly what a
one-direction walk over visible nodes reaches within the profile's hops.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.graph.conftest import BACKENDS, SharedServerGraph, bolt_store
from tests.graph.profile_world import EDGES, NODES, NOW, TODAY, access, write
from trilha.access import Principal, visible
from trilha.config import QueryProfile, load_profiles
from trilha.graph.read.profile_query import ProfileQuery, fold
from trilha.graph.read.profile_reads import search_claims
from trilha.graph.read.profile_walk import profile_walk
from trilha.graph.stores.base import GraphStore

PROFILES = list(load_profiles().profiles.values())
SETTINGS = settings(max_examples=60, deadline=None)

principals = st.builds(
    Principal,
    user_id=st.one_of(st.none(), st.sampled_from(["u-ana", "u-bruno", "u-carla", "u-dan"])),
    org_ids=st.lists(st.sampled_from(["acme", "beta", "gamma"]), max_size=2),
    hierarchy_level=st.integers(0, 4),
)
queries = st.builds(
    ProfileQuery,
    today=st.just(TODAY),
    terms=st.lists(st.sampled_from(["lgpd", "relatorio", "beta", "privacidade"]), max_size=2).map(
        tuple
    ),
    org_ids=st.lists(st.sampled_from(["acme", "beta"]), max_size=1).map(tuple),
    overdue=st.booleans(),
    priority_only=st.booleans(),
)


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    if request.param == "falkordb":
        store: GraphStore = SharedServerGraph(request.getfixturevalue("falkordb_server"))
    else:
        store = bolt_store(request.getfixturevalue("arcadedb"))
    write(store)
    yield store
    store.close()


def _sees(principal: Principal, key: str) -> bool:
    fields = access(key)
    assert fields is not None, f"{key} is not an own node of the world"
    return visible(fields, principal)


def _valid(key: str) -> bool:
    props = next(p for label, k, p in NODES if f"{label}:{k}" == key)
    return (
        str(props.get("valid_from", "")) < "2026-02-02"
        and str(props.get("valid_to", "9999")) >= "2026-02-01"
        and str(props.get("expires_at", "9999")) > "2026-02-01T00:00:00"
    )


class Oracle:
    """Which nodes ``principal`` may walk through under ``profile``, and the walk itself."""

    def __init__(self, principal: Principal, profile: QueryProfile) -> None:
        self.profile = profile
        self.walkable = {
            f"{label}:{k}"
            for label, k, _ in NODES
            if _sees(principal, f"{label}:{k}")
            and (not profile.require_validity or _valid(f"{label}:{k}"))
        }

    def anchors(self) -> set[str]:
        return {k for k in self.walkable if k.split(":")[0] in self.profile.anchors}

    def links(self, root: str) -> dict[str, int]:
        """Node → hops of the one-direction walks from ``root`` (first found per node)."""
        steps = [
            (s, e, out)
            for t, a, b in EDGES
            if t in self.profile.allowed_rels and a in self.walkable and b in self.walkable
            for s, e, out in ((a, b, True), (b, a, False))
        ]
        found: dict[str, int] = {}
        frontier = {(root, True), (root, False)}
        seen = set(frontier)
        for hops in range(1, self.profile.max_hops + 1):
            reached = {(e, out) for s, e, out in steps for n, d in frontier if s == n and out == d}
            reached -= seen
            seen |= reached
            for node, _ in reached:
                if node != root:
                    found.setdefault(node, hops)
            frontier = reached
        return found


@SETTINGS
@given(principal=principals, profile=st.sampled_from(PROFILES), query=queries)
def test_every_hit_and_link_is_visible(
    world: GraphStore, principal: Principal, profile: QueryProfile, query: ProfileQuery
) -> None:
    oracle = Oracle(principal, profile)
    result = profile_walk(world, profile, query, principal=principal, limit=100)
    for hit in result.hits:
        assert hit.node_id in oracle.anchors()
        for link in hit.links:
            assert link.other_id in oracle.walkable
            assert link.via is None or link.via in oracle.walkable


@SETTINGS
@given(principal=principals, profile=st.sampled_from(PROFILES))
def test_unfiltered_walks_are_exactly_the_oracles(
    world: GraphStore, principal: Principal, profile: QueryProfile
) -> None:
    oracle = Oracle(principal, profile)
    result = profile_walk(
        world, profile, ProfileQuery(today=TODAY), principal=principal, limit=100, max_links=100
    )
    assert {h.node_id for h in result.hits} == oracle.anchors()
    for hit in result.hits:
        assert {x.other_id: x.hops for x in hit.links} == oracle.links(hit.node_id)


@SETTINGS
@given(
    principal=principals,
    terms=st.lists(st.sampled_from(["lgpd", "prazo", "regra", "tick", "operações"]), max_size=2),
)
def test_claims_are_exactly_the_visible_valid_matching_ones(
    world: GraphStore, principal: Principal, terms: list[str]
) -> None:
    folded = [fold(t) for t in terms]
    expected = {
        f"Claim:{k}"
        for label, k, p in NODES
        if label == "Claim"
        and _sees(principal, f"Claim:{k}")
        and _valid(f"Claim:{k}")
        and (not folded or any(t in fold(str(p["text"])) for t in folded))
    }
    found = search_claims(world, terms, principal=principal, now=NOW, limit=100)
    assert {h.node_id for h in found.hits} == expected
