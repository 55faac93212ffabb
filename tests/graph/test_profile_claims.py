"""Claim search (REQ-RETR-030) on both backends: visible, holding now, matching, ranked by the
share of terms × confidence."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.graph.conftest import BACKENDS, SharedServerGraph, bolt_store
from tests.graph.profile_world import ANA, NOW, write
from trilha.access import Principal
from trilha.graph.read.profile_reads import search_claims
from trilha.graph.stores.base import GraphStore


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    if request.param == "falkordb":
        store: GraphStore = SharedServerGraph(request.getfixturevalue("falkordb_server"))
    else:
        store = bolt_store(request.getfixturevalue("arcadedb"))
    write(store)
    yield store
    store.close()


def test_visible_valid_claims_ranked_by_terms_and_confidence(world: GraphStore) -> None:
    result = search_claims(world, ["LGPD"], principal=ANA, now=NOW)
    assert [(h.node_id, h.score) for h in result.hits] == [
        ("Claim:c-ropa", 0.9),
        ("Claim:c-low", 0.3),
    ]
    top = result.hits[0]
    assert (top.source_ref, top.created_at, top.confidence) == (
        "lgpd#art37",
        "2026-01-10T00:00:00Z",
        0.9,
    )
    assert top.entities == ("LGPD",)
    assert (result.candidates, result.nodes_scanned, result.truncated) == (2, 2, False)


def test_hidden_expired_and_future_claims_never_come_back(world: GraphStore) -> None:
    """c-hidden is Bruno's, c-expired expired on 2026-01-15, c-later holds from 2026-03-01."""
    found = {
        h.node_id
        for h in search_claims(world, ["lgpd", "prazo", "regra"], principal=ANA, now=NOW).hits
    }
    assert found == {"Claim:c-ropa", "Claim:c-low"}
    bruno = Principal(user_id="u-bruno", org_ids=["acme"], hierarchy_level=1)
    assert "Claim:c-hidden" in {
        h.node_id for h in search_claims(world, ["lgpd"], principal=bruno, now=NOW).hits
    }
    before = datetime(2026, 1, 14, tzinfo=UTC)
    assert "Claim:c-expired" in {
        h.node_id for h in search_claims(world, ["prazo"], principal=ANA, now=before).hits
    }
    later = datetime(2026, 3, 2, tzinfo=UTC)
    assert "Claim:c-later" in {
        h.node_id for h in search_claims(world, ["regra"], principal=ANA, now=later).hits
    }


def test_share_of_terms_and_accents(world: GraphStore) -> None:
    """Two terms, c-ropa contains both ('operacoes' folds 'operações'), c-low one."""
    result = search_claims(world, ["OPERACOES", "lgpd"], principal=ANA, now=NOW)
    assert [(h.node_id, h.score) for h in result.hits] == [
        ("Claim:c-ropa", 0.9),
        ("Claim:c-low", 0.15),
    ]


@pytest.mark.parametrize(
    "terms",
    [["`tick`"], ['"quote"'], ["it's"], ['IT\'S A `TICK` AND "QUOTE"']],
)
def test_quotes_and_backticks_are_just_characters(world: GraphStore, terms: list[str]) -> None:
    result = search_claims(world, terms, principal=ANA, now=NOW)
    assert [h.node_id for h in result.hits] == ["Claim:c-quote"]


def test_injection_attempts_match_nothing(world: GraphStore) -> None:
    for term in ["') RETURN 1 //", "x' OR true OR '", "}) MATCH (n) DETACH DELETE n //"]:
        assert search_claims(world, [term], principal=ANA, now=NOW).hits == ()
    assert search_claims(world, ["lgpd"], principal=ANA, now=NOW).candidates == 2


def test_without_terms_confidence_ranks_and_the_budget_cuts(world: GraphStore) -> None:
    result = search_claims(world, [], principal=ANA, now=NOW, limit=2)
    assert [h.node_id for h in result.hits] == ["Claim:c-ropa", "Claim:c-quote"]
    assert result.candidates == 3
    cut = search_claims(world, [], principal=ANA, now=NOW, max_nodes_scanned=1)
    assert (cut.truncated, cut.nodes_scanned, len(cut.hits)) == (True, 1, 1)
