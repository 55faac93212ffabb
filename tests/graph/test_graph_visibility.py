"""Every graph read shows only what the principal may see, on both backends.

A seeded corpus of documents with random access fields and entities (plus Criterio/Fato
records) is written once per backend; hypothesis draws principals and questions, and every node,
title, entity, edge, path and reason that subgraph, path, top-N and context.md return is checked
against an oracle built from the pure rule :func:`trilha.access.visible`. ``CHECKED`` counts the
(principal, item) decisions; run with ``-s`` to see them.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.access.test_policy import _meta, access_of, access_units, principals
from tests.graph.conftest import BACKENDS, SharedServerGraph, bolt_store
from trilha.access import Principal, visible
from trilha.access.cypher import visible_where
from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.records import loads_records
from trilha.graph.build.writer import GraphWriter
from trilha.graph.model import cooccurrence_weight
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore
from trilha.types import TextUnit

NAMES = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "Kilo"]
DOCS = 36
CHECKED: dict[str, int] = {}


@dataclass
class Corpus:
    """What was written: units, their entities, and the records' links to documents."""

    units: list[TextUnit]
    mentions: dict[str, set[str]]  # unit id -> entity names
    attached: dict[str, str]  # display id of a Criterio/Fato -> doc id


def _corpus(seed: int = 3) -> tuple[Corpus, dict[str, list[ExtractedEntity]], str]:
    rng = np.random.default_rng(seed)
    units, entities = [], {}
    for i in range(DOCS):
        meta = _meta(rng)
        doc = f"d{i:02d}"
        for o in range(int(rng.integers(1, 3))):
            u = TextUnit(
                unit_id=f"{doc}#{o}",
                doc_id=doc,
                text=f"text of {doc} part {o}",
                ordinal=o,
                title=f"Title {doc}",
                tema=str(rng.choice(["cat-a", "cat-b", "cat-c"])),
                tags=[str(rng.choice(["tag-x", "tag-y"]))],
                **meta,  # type: ignore[arg-type]
            )
            units.append(u)
            names = rng.choice(NAMES, size=int(rng.integers(1, 4)), replace=False)
            entities[u.unit_id] = [
                ExtractedEntity(str(n), "Concept", float(s))
                for n, s in zip(names, np.round(rng.uniform(0.2, 1, len(names)), 2), strict=True)
            ]
    attached = {"Criterio:Crit One": "d03", "Criterio:Crit Two": "d07", "Fato:fato-1": "d11"}
    records = "\n".join(
        json.dumps(
            {
                "kind": "edge",
                "type": f"HAS_{ref.split(':')[0].upper()}",
                "source": f"Doc:{doc}",
                "target": ref,
            }
        )
        for ref, doc in attached.items()
    )
    mentions = {u: {e.name for e in found} for u, found in entities.items()}
    return Corpus(units, mentions, attached), entities, records


@pytest.fixture(scope="module", params=BACKENDS)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, GraphService, Corpus]]:
    if request.param == "falkordb":
        store: GraphStore = SharedServerGraph(request.getfixturevalue("falkordb_server"))
    else:
        store = bolt_store(request.getfixturevalue("arcadedb"))
    corpus, entities, records = _corpus()
    writer = GraphWriter(store)
    writer.upsert_units(corpus.units, entities)
    writer.write_records(loads_records(records))
    service = GraphService(store, cache_ttl_s=0.0001)
    yield request.param, service, corpus
    print(f"\n[{request.param}] (principal, item) decisions checked: {CHECKED}")
    out = tmp_path_factory.getbasetemp() / f"graph-visibility-{request.param}.json"
    out.write_text(json.dumps(CHECKED))
    service.close()


class Oracle:
    """What ``principal`` may see in the corpus, by the pure rule alone."""

    def __init__(self, corpus: Corpus, principal: Principal) -> None:
        self.corpus = corpus
        self.chunks = {u.unit_id for u in corpus.units if visible(access_of(u), principal)}
        self.docs = {u.doc_id for u in corpus.units if u.unit_id in self.chunks}
        self.entities = {n for c in self.chunks for n in corpus.mentions[c]}
        shown = {f"Doc:{d}" for d in self.docs} | {f"Chunk:{c}" for c in self.chunks}
        shown |= {f"Entity:{n}" for n in self.entities}
        for u in corpus.units:
            if u.unit_id in self.chunks:
                shown |= {f"Category:{u.tema}", *(f"Tag:{t}" for t in u.tags)}
        shown |= {ref for ref, doc in corpus.attached.items() if doc in self.docs}
        self.shown = shown
        self.support: dict[frozenset[str], int] = {}
        for c in self.chunks:
            for a, b in combinations(sorted(corpus.mentions[c]), 2):
                key = frozenset((a, b))
                self.support[key] = self.support.get(key, 0) + 1
        self.titles = {u.doc_id: u.title for u in corpus.units}

    def distance(self, a: str, b: str) -> int | None:
        if a not in self.entities or b not in self.entities:
            return None
        seen, todo = {a: 0}, deque([a])
        while todo:
            x = todo.popleft()
            for pair in self.support:
                if x in pair:
                    (y,) = pair - {x}
                    if y not in seen:
                        seen[y] = seen[x] + 1
                        todo.append(y)
        return seen.get(b)

    def topn_docs(self, query: list[str]) -> set[str]:
        near = {
            e for q in query for e in NAMES if e not in query and frozenset((q, e)) in self.support
        }
        wanted = set(query) | near
        return {c.split("#")[0] for c in self.chunks if self.corpus.mentions[c] & wanted}


def _count(backend: str, read: str, n: int = 1) -> None:
    key = f"{backend}:{read}"
    CHECKED[key] = CHECKED.get(key, 0) + n


doc_ids = st.sampled_from([f"d{i:02d}" for i in range(DOCS)])
names = st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True)
SETTINGS = settings(max_examples=120, deadline=None)


@SETTINGS
@given(principal=principals, doc=doc_ids, hops=st.integers(1, 2))
def test_subgraph_shows_only_visible_nodes_and_edges(
    world: tuple[str, GraphService, Corpus], principal: Principal, doc: str, hops: int
) -> None:
    backend, service, corpus = world
    oracle = Oracle(corpus, principal)
    got = service.subgraph(doc, None, hops, 500, principal=principal)
    if doc not in oracle.docs:  # reads exactly like a missing document
        assert (got.nodes, got.edges) == ([], [])
        assert got.constraints.notes == [f"document {doc!r} not found"]
        _count(backend, "subgraph", 1)
        return
    for node in got.nodes:
        assert node.id in oracle.shown, node
        if node.label == "Doc":
            assert node.title == oracle.titles[node.id.partition(":")[2]]
    for edge in got.edges:
        assert edge.source in oracle.shown and edge.target in oracle.shown, edge
        if edge.type == "RELATED":
            ends = frozenset(e.partition(":")[2] for e in (edge.source, edge.target))
            assert edge.weight == pytest.approx(cooccurrence_weight(oracle.support[ends]))
    mine = {f"Chunk:{c}" for c in oracle.chunks if c.startswith(f"{doc}#")}
    assert mine <= {n.id for n in got.nodes}  # nothing visible is lost
    _count(backend, "subgraph", len(got.nodes) + len(got.edges))


@SETTINGS
@given(principal=principals, pair=names, length=st.integers(1, 4))
def test_path_runs_only_through_visible_edges_and_is_shortest(
    world: tuple[str, GraphService, Corpus], principal: Principal, pair: list[str], length: int
) -> None:
    backend, service, corpus = world
    oracle = Oracle(corpus, principal)
    source, target = pair[0], pair[-1]
    got = service.path(source, target, length, principal=principal)
    want = oracle.distance(source, target)
    if want is None or want > length:
        assert not got.meta.found and got.path == []
        _count(backend, "path", 2)
        return
    assert got.meta.found and got.meta.length == want
    ids = [n.id for n in got.path]
    assert all(i in oracle.shown for i in ids)
    for a, b in pairwise(ids):
        assert oracle.support.get(frozenset((a[7:], b[7:])), 0) > 0
    _count(backend, "path", len(ids) + len(got.edges))


RELATED_REASON = re.compile(r"related to (\S+) via (\S+) \(weight ([0-9.]+)\)")


@SETTINGS
@given(principal=principals, query=st.one_of(st.none(), names))
def test_topn_ranks_only_visible_documents_for_visible_reasons(
    world: tuple[str, GraphService, Corpus], principal: Principal, query: list[str] | None
) -> None:
    backend, service, corpus = world
    oracle = Oracle(corpus, principal)
    got = service.topn(query, None, None, 500, principal=principal)
    want = oracle.docs if query is None else oracle.topn_docs(query)
    assert {i.doc_id for i in got.items} == want
    for item in got.items:
        assert item.title == oracle.titles[item.doc_id]
        text = " ".join(item.reasons)
        assert not [n for n in NAMES if n in text and n not in oracle.entities]
        for q, via, weight in RELATED_REASON.findall(text):
            support = oracle.support.get(frozenset((q, via)), 0)
            assert support > 0 and float(weight) == round(cooccurrence_weight(support), 2)
    _count(backend, "topn", DOCS)  # the set equality decides every document, either way


@SETTINGS
@given(principal=principals, doc=st.one_of(st.none(), doc_ids), query=names)
def test_context_md_names_nothing_invisible(
    world: tuple[str, GraphService, Corpus],
    principal: Principal,
    doc: str | None,
    query: list[str],
) -> None:
    backend, service, corpus = world
    oracle = Oracle(corpus, principal)
    text = service.context_md(doc, query, limit=50, principal=principal)
    hidden_docs = {u.doc_id for u in corpus.units} - oracle.docs
    for d in hidden_docs:  # the id asked for may be echoed, never its title or chunks
        assert f"Title {d}" not in text and f"{d}#" not in text
        assert d == doc or d not in text
    hidden = [n for n in NAMES if n not in oracle.entities and n not in query]
    assert not [n for n in hidden if n in text]
    _count(backend, "context", len(hidden_docs) + len(hidden))


@pytest.fixture(scope="module", params=BACKENDS)
def access_store(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[str, GraphStore, list[TextUnit]]]:
    if request.param == "falkordb":
        store: GraphStore = SharedServerGraph(request.getfixturevalue("falkordb_server"))
    else:
        store = bolt_store(request.getfixturevalue("arcadedb"))
    units = access_units()
    rows = [
        {"id": u.unit_id, "props": {k: v for k, v in u.payload().items() if v is not None}}
        for u in units
    ]
    store.write(
        "UNWIND $rows AS row CREATE (n:Chunk {id: row.id}) SET n += row.props", {"rows": rows}
    )
    store.write("CREATE (:Chunk {id: 'bare'})")  # no access fields at all: nobody sees it
    yield request.param, store, units
    store.close()


@settings(max_examples=40, deadline=None)
@given(principal=principals)
def test_the_fragment_decides_as_the_rule(
    access_store: tuple[str, GraphStore, list[TextUnit]], principal: Principal
) -> None:
    backend, store, units = access_store
    where, params = visible_where(principal, "n")
    got = {r["id"] for r in store.run(f"MATCH (n:Chunk) WHERE {where} RETURN n.id AS id", params)}
    assert got == {u.unit_id for u in units if visible(access_of(u), principal)}
    _count(backend, "fragment", len(units) + 1)
