"""The graph benchmark's synthetic graph: entities, random RELATED edges between them, and a
document layer (docs, categories, two chunks per doc, MENTIONS), loaded with batched
``UNWIND ... CREATE`` into an empty store (:mod:`trilha.graph.bench` says what it measures)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from trilha.errors import ConfigurationError
from trilha.graph.stores.base import GraphStore, ensure_indexes, write_rows

_TYPES = ("Concept", "Org", "Product", "Law", "Person")
#: Access fields of the synthetic docs and chunks: seen by everyone.
_PUBLIC = "visibility: 'public', sensitivity: 0, hierarchy_level: 0, acl: ['*']"


def _relations(rng: np.random.Generator, n: int, m: int) -> np.ndarray[Any, Any]:
    pairs = np.empty((0, 2), dtype=np.int64)
    while len(pairs) < m and n > 1:
        a = rng.integers(0, n, size=int((m - len(pairs)) * 1.2) + 10)
        b = rng.integers(0, n, size=len(a))
        new = np.column_stack([np.minimum(a, b), np.maximum(a, b)])[a != b]
        pairs = np.unique(np.vstack([pairs, new]), axis=0)
    return np.asarray(rng.permutation(pairs)[:m])


Loader = Callable[[str, Sequence[Any]], int]


def build_synthetic(
    store: GraphStore, entities: int, edges: int, *, seed: int = 0, batch_size: int = 5000
) -> dict[str, int]:
    """Load the synthetic graph into an empty store; returns the counts loaded."""
    if store.run("MATCH (n) RETURN n.id AS id LIMIT 1"):
        raise ConfigurationError("the benchmark needs an empty graph")
    rng = np.random.default_rng(seed)
    ensure_indexes(store)

    def load(cypher: str, rows: Sequence[Any]) -> int:
        return write_rows(store, cypher, rows, batch_size=batch_size)

    rel = _load_entities(load, rng, entities, edges)
    docs = max(1, entities // 20)
    _load_docs(load, rng, docs)
    mentions = _load_mentions(load, rng, entities, docs, rel)
    return {
        "entities": entities,
        "edges": len(rel),
        "docs": docs,
        "chunks": docs * 2,
        "mentions": mentions,
    }


def _load_entities(
    load: Loader, rng: np.random.Generator, entities: int, edges: int
) -> np.ndarray[Any, Any]:
    """Entities and the RELATED edges among them; the edges' (a, b) index pairs."""
    load(
        "UNWIND $rows AS r CREATE (:Entity {id: r.id, name: r.name, type: r.type, "
        "salience: r.s, origin: 'bench'})",
        [
            {"id": f"e{i}", "name": f"E{i}", "type": _TYPES[i % 5], "s": float(s)}
            for i, s in enumerate(np.round(rng.random(entities), 3))
        ],
    )
    rel = _relations(rng, entities, edges)
    weights = np.round(rng.random(len(rel)), 3)
    load(
        "UNWIND $rows AS r MATCH (a:Entity {id: r.a}) MATCH (b:Entity {id: r.b}) "
        "CREATE (a)-[:RELATED {weight: r.w}]->(b)",
        [
            {"a": f"e{a}", "b": f"e{b}", "w": float(w)}
            for (a, b), w in zip(rel, weights, strict=True)
        ],
    )
    return rel


def _load_docs(load: Loader, rng: np.random.Generator, docs: int) -> None:
    """Categories, docs and two chunks per doc."""
    load("UNWIND $rows AS r CREATE (:Category {id: r, name: r})", [f"c{i}" for i in range(10)])
    days = rng.integers(0, 5 * 365, size=docs)
    load(
        "UNWIND $rows AS r MATCH (c:Category {id: r.c}) CREATE (d:Doc {id: r.id, title: r.t, "
        f"updated_at: r.u, lang: r.l, {_PUBLIC}}})-[:IN_CATEGORY]->(c)",
        [
            {
                "id": f"d{i}",
                "t": f"Document {i}",
                "c": f"c{i % 10}",
                "l": ("en", "pt")[i % 2],
                "u": time.strftime("%Y-%m-%dT00:00:00Z", time.gmtime(1577836800 + int(d) * 86400)),
            }
            for i, d in enumerate(days)
        ],
    )
    load(
        "UNWIND $rows AS r MATCH (d:Doc {id: r.d}) CREATE (:Chunk {id: r.id, doc_id: r.d, "
        f"ordinal: r.o, {_PUBLIC}}})-[:PART_OF]->(d)",
        [{"id": f"d{i}#{o}", "d": f"d{i}", "o": o} for i in range(docs) for o in range(2)],
    )


def _load_mentions(
    load: Loader, rng: np.random.Generator, entities: int, docs: int, rel: np.ndarray[Any, Any]
) -> int:
    """Five random MENTIONS per chunk, plus one chunk mentioning both ends of each RELATED
    edge; how many."""
    targets = rng.integers(0, entities, size=(docs * 2, 5))
    mentions = [
        {"c": f"d{i // 2}#{i % 2}", "e": f"e{e}", "s": float(s)}
        for i, row in enumerate(targets)
        for e, s in zip(set(row.tolist()), np.round(rng.random(5), 3), strict=False)
    ]
    chunks = docs * 2
    support = {
        (f"d{(i % chunks) // 2}#{i % 2}", f"e{e}") for i, pair in enumerate(rel) for e in pair
    } - {(m["c"], m["e"]) for m in mentions}
    mentions += [{"c": c, "e": e, "s": 0.5} for c, e in sorted(support)]
    return load(
        "UNWIND $rows AS r MATCH (c:Chunk {id: r.c}) MATCH (e:Entity {id: r.e}) "
        "CREATE (c)-[:MENTIONS {salience: r.s}]->(e)",
        mentions,
    )
