"""KG boost: the arithmetic by hand, one batched query, degradation without exceptions."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import pytest

from trilha.graph.boost import statements as cypher
from trilha.graph.boost.prior import backfill_entity_counts
from trilha.graph.boost.score import (
    BoostWeights,
    compute_kg_boost,
    entity_part,
    evidence_prior,
    normalise_boosts,
    raw_boost,
    specificity,
)
from trilha.graph.build.records import loads_records
from trilha.graph.build.writer import GraphWriter
from trilha.graph.stores.base import GraphStore, Params, Row
from trilha.graph.stores.bolt import BoltGraphStore
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.graph.visibility import Visibility
from trilha.testing.loopback import free_port

W = BoostWeights()


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({}, 0.0),
        ({"criterios": [{"id": "a", "peso": 3.0}]}, 3.0),
        ({"criterios": [{"id": "a", "peso": None}, {"id": None, "peso": None}]}, 1.0),
        ({"criterios": [{"id": "a", "peso": 2.0}, {"id": "a", "peso": 2.0}]}, 2.0),  # distinct
        ({"criterios": [{"id": "a", "peso": 1.0}, {"id": "a", "peso": 2.5}]}, 2.5),  # the max
        ({"fatos": ["f1", "f1", None], "provas": ["p1", "p2"]}, 0.5 + 1.0),
        (
            {"criterios": [{"id": "a", "peso": 1.5}], "fatos": ["f"], "provas": ["p"]},
            1.5 + 0.5 + 0.5,
        ),
    ],
)
def test_evidence_prior_table(row: dict[str, Any], expected: float) -> None:
    assert evidence_prior(row, W) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({}, 0.0),
        ({"prior": 3.0}, 3.0),
        ({"prior": None, "entities": []}, 0.0),
        ({"entities": [{"id": "stj", "salience": 0.9}, {"id": None, "salience": None}]}, 0.9),
        ({"entities": [{"id": "x", "salience": 0.5}, {"id": "x", "salience": 0.25}]}, 0.5),
        ({"prior": 2.5, "entities": [{"id": "x", "salience": 0.25}]}, 2.75),
    ],
)
def test_raw_boost_table(row: dict[str, Any], expected: float) -> None:
    assert raw_boost(row, W) == pytest.approx(expected)


def test_weights() -> None:
    w = BoostWeights(criterio=0.5, fato=2.0, prova=0.0, entity=4.0)
    evidence = {"criterios": [{"id": "a", "peso": 2.0}], "fatos": ["f"], "provas": ["p"]}
    assert evidence_prior(evidence, w) == pytest.approx(0.5 * 2 + 2.0 * 1)
    row = {"prior": 1.0, "entities": [{"id": "x", "salience": 0.5}]}
    assert raw_boost(row, w) == pytest.approx(1.0 + 4.0 * 0.5)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, {}),
        ({"a": 0.0, "b": 0.0}, {"a": 0.0, "b": 0.0}),
        ({"a": 5.0, "b": 2.4, "c": 0.0}, {"a": 1.0, "b": 0.48, "c": 0.0}),
        ({"a": 0.2, "b": 0.1}, {"a": 0.2, "b": 0.1}),  # weak evidence stays weak
        ({"a": 1.0, "b": 0.5}, {"a": 1.0, "b": 0.5}),
    ],
)
def test_normalise_table(raw: dict[str, float], expected: dict[str, float]) -> None:
    assert normalise_boosts(raw) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("chunks", "corpus", "expected"),
    [
        (1, 100, 1.0),  # one chunk in a hundred: fully specific
        (10, 100, 0.5),  # ln(10) / ln(100)
        (100, 100, 0.0),  # every chunk mentions it: says nothing
        (250, 100, 0.0),  # a stale count above the corpus is clamped
        (0, 100, 1.0),  # df counts at least the chunk that mentions it
        (None, 100, 1.0),  # graph written before counts
        (3, None, 1.0),  # corpus size unknown
        (1, 1, 1.0),  # a one-chunk graph
    ],
)
def test_specificity_table(chunks: int | None, corpus: int | None, expected: float) -> None:
    assert specificity(chunks, corpus) == pytest.approx(expected)


def test_entity_part_weighs_salience_by_specificity() -> None:
    ents = [
        {"id": "rare", "salience": 0.8, "chunks": 1},
        {"id": "common", "salience": 1.0, "chunks": 10},
        {"id": "common", "salience": 0.5, "chunks": 10},  # the same entity counts once
    ]
    assert entity_part(ents, W, corpus=100) == pytest.approx(0.8 + 1.0 * 0.5)
    assert entity_part(ents, W) == pytest.approx(0.8 + 1.0)


EVIDENCE = """
{"kind":"node","label":"Criterio","id":"Dano moral","props":{"peso":"alto"}}
{"kind":"node","label":"Criterio","id":"Prescrição","props":{}}
{"kind":"node","label":"Fato","id":"f1","props":{"text":"atraso de voo"}}
{"kind":"node","label":"Prova","id":"p1","props":{"text":"bilhete"}}
{"kind":"node","label":"Prova","id":"p2","props":{"text":"e-mail"}}
{"kind":"edge","type":"HAS_CRITERIO","source":"Doc:stj/resp-1","target":"Criterio:Dano moral"}
{"kind":"edge","type":"HAS_CRITERIO","source":"Chunk:stj/resp-2#0","target":"Criterio:Prescrição"}
{"kind":"edge","type":"HAS_FATO","source":"Doc:stj/resp-1","target":"Fato:f1"}
{"kind":"edge","type":"HAS_PROVA","source":"Chunk:stj/resp-1#0","target":"Prova:p1"}
{"kind":"edge","type":"HAS_PROVA","source":"Doc:stj/resp-2","target":"Prova:p2"}
"""
UNITS = ["stj/resp-1#0", "stj/resp-2#0", "guide/graphrag#0", "missing#0"]
# resp-1: peso 3 + fato 0.5 + prova 0.5 + STJ salience 1.0 = 5.0
# resp-2: peso 1 (unset) + prova 0.5 + STJ salience 0.9 = 2.4
EXPECTED = {"stj/resp-1#0": 1.0, "stj/resp-2#0": 0.48, "guide/graphrag#0": 0.0, "missing#0": 0.0}


@pytest.fixture
def evidence(corpus: GraphStore) -> GraphStore:
    GraphWriter(corpus).write_records(loads_records(EVIDENCE))
    return corpus


def test_boost_on_the_graph(evidence: GraphStore) -> None:
    result = compute_kg_boost(evidence, UNITS, ["stj"], timeout_s=5.0)
    assert result.warning is None
    assert result.scores == pytest.approx(EXPECTED)
    assert result.raw == pytest.approx(
        {"stj/resp-1#0": 5.0, "stj/resp-2#0": 2.4, "guide/graphrag#0": 0.0, "missing#0": 0.0}
    )


def test_boost_is_one_query(evidence: GraphStore) -> None:
    probe = ConcurrencyProbe(evidence, delay_s=0.0)
    for entities in (["stj"], []):
        compute_kg_boost(probe, UNITS, entities, timeout_s=5.0)
    assert probe.calls == 2
    vis = Visibility.of(None)
    params = {**vis.params, "unit_ids": UNITS, "entity_keys": ["stj"]}
    rows = evidence.run(cypher.kg_boost(True, vis), params)
    assert sorted(r["uid"] for r in rows) == sorted(UNITS[:3])
    priors = {r["uid"]: r["prior"] for r in evidence.run(cypher.kg_boost(False, vis), params)}
    assert priors == {"stj/resp-1#0": 4.0, "stj/resp-2#0": 1.5, "guide/graphrag#0": 0.0}


def test_entities_store_how_many_chunks_mention_them(corpus: GraphStore) -> None:
    count = "MATCH (e:Entity) RETURN e.id AS id, e.chunks AS n"
    expected = {"neo4j": 3, "knowledge graph": 2, "stj": 2, "lgpd": 2}
    expected |= {"graphrag": 1, "cypher": 1, "dano moral": 1}
    assert {r["id"]: r["n"] for r in corpus.run(count)} == expected
    GraphWriter(corpus).delete_doc("guide/old")
    counts = {r["id"]: r["n"] for r in corpus.run(count)}
    assert counts["neo4j"] == 2 and counts["knowledge graph"] == 1
    corpus.write("MATCH (e:Entity) REMOVE e.chunks")  # a graph from before counts
    assert backfill_entity_counts(corpus) == 7
    assert {r["id"]: r["n"] for r in corpus.run(count)} == counts


def test_boost_weighs_entities_by_specificity(corpus: GraphStore) -> None:
    # STJ: 2 of 5 chunks, specificity ln(5/2)/ln(5); the raw boosts stay below 1, unscaled
    spec = math.log(5 / 2) / math.log(5)
    result = compute_kg_boost(
        corpus, ["stj/resp-1#0", "stj/resp-2#0", "guide/graphrag#0"], ["STJ"], 5.0, corpus_size=5
    )
    assert result.scores == pytest.approx(
        {"stj/resp-1#0": 1.0 * spec, "stj/resp-2#0": 0.9 * spec, "guide/graphrag#0": 0.0}
    )


def test_only_relevant_units_are_read_and_boosted(evidence: GraphStore) -> None:
    probe = ConcurrencyProbe(evidence, delay_s=0.0)
    gated = compute_kg_boost(probe, UNITS, ["stj"], timeout_s=5.0, relevant={"stj/resp-2#0"})
    assert gated.raw == pytest.approx(
        {"stj/resp-1#0": 0.0, "stj/resp-2#0": 2.4, "guide/graphrag#0": 0.0, "missing#0": 0.0}
    )
    assert gated.scores["stj/resp-2#0"] == 1.0
    none = compute_kg_boost(probe, UNITS, ["stj"], timeout_s=5.0, relevant=set())
    assert set(none.scores.values()) == {0.0} and none.warning is None
    assert probe.calls == 1  # nothing relevant: no query at all


def test_the_prior_alone_is_gated_too(evidence: GraphStore) -> None:
    result = compute_kg_boost(
        evidence, UNITS, [], timeout_s=5.0, relevant={"stj/resp-1#0", "guide/graphrag#0"}
    )
    assert result.raw == pytest.approx(
        {"stj/resp-1#0": 4.0, "stj/resp-2#0": 0.0, "guide/graphrag#0": 0.0, "missing#0": 0.0}
    )


def test_boost_with_the_store_stopped(store: GraphStore) -> None:
    store.close()
    result = compute_kg_boost(store, ["a#0"], ["x"], timeout_s=2.0)
    assert result.scores == {} and result.warning is not None
    assert result.warning.startswith("kg boost skipped: graph unavailable")


def test_boost_with_the_server_gone(tmp_path: Any) -> None:
    falkor = FalkorDBStore.embedded(tmp_path / "g")
    assert falkor.server is not None
    falkor.server.stop()  # the server dies under a live client
    assert compute_kg_boost(falkor, ["a#0"], [], timeout_s=2.0).warning
    falkor.close()
    nobody = BoltGraphStore(
        f"bolt://127.0.0.1:{free_port()}", "u", "p", timeout_s=1.0, max_retry_s=0
    )
    result = compute_kg_boost(nobody, ["a#0"], [], timeout_s=3.0)
    assert result.scores == {} and "unavailable" in (result.warning or "")
    nobody.close()


def test_boost_too_slow(evidence: GraphStore) -> None:
    slow = ConcurrencyProbe(evidence, delay_s=1.0)
    start = time.perf_counter()
    result = compute_kg_boost(slow, UNITS, ["stj"], timeout_s=0.1)
    assert time.perf_counter() - start < 0.9
    assert result.scores == {} and result.warning == "kg boost skipped: graph slower than 0.1s"


def test_boost_without_store_or_units() -> None:
    assert (
        compute_kg_boost(None, ["a"], [], 1.0).warning
        == "kg boost skipped: no graph store configured"
    )
    assert compute_kg_boost(None, [], [], 1.0).scores == {}


class ConcurrencyProbe:
    """A real store behind a counter of concurrent calls (and an optional delay)."""

    def __init__(self, inner: GraphStore, delay_s: float = 0.05) -> None:
        self.inner, self.delay_s = inner, delay_s
        self.name, self.dialect = inner.name, inner.dialect
        self.calls = self.active = self.peak = 0
        self._lock = threading.Lock()

    def run(
        self, cypher: str, params: Params | None = None, *, timeout_s: float | None = None
    ) -> list[Row]:
        with self._lock:
            self.calls += 1
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            time.sleep(self.delay_s)
            return self.inner.run(cypher, params, timeout_s=timeout_s)
        finally:
            with self._lock:
                self.active -= 1

    def write(self, cypher: str, params: Params | None = None) -> list[Row]:
        return self.inner.write(cypher, params)

    def close(self) -> None:
        self.inner.close()


def test_probe_is_a_store(store: GraphStore) -> None:
    assert isinstance(ConcurrencyProbe(store), GraphStore)
