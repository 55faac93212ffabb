"""The facade: TTL cache, retrieval log lines, boost logging, context.md, store factory."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from tests.graph.conftest import ENTITIES, UNITS
from tests.graph.test_graph_boost import ConcurrencyProbe
from trilha.access import Principal, scope_key
from trilha.errors import BadRequestError, ConfigurationError
from trilha.graph.build.records import loads_records
from trilha.graph.log import RetrievalLog
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore, Params, Row
from trilha.graph.stores.bolt import BoltGraphStore
from trilha.graph.stores.factory import open_graph_store
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.settings import TrilhaSettings

FIELDS = {"timestamp", "query", "result_count", "latency_ms", "cache_hit"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_cache_and_log(store: GraphStore, tmp_path: Path) -> None:
    clock = Clock()
    log = RetrievalLog(tmp_path / "logs" / "retrieval-log.jsonl")
    service = GraphService(store, log=log, cache_ttl_s=10, clock=clock)
    service.ingest(UNITS, ENTITIES)
    first = service.subgraph("guide/graphrag")
    second = service.subgraph("guide/graphrag")
    assert first == second
    second.nodes.clear()  # callers cannot corrupt the cache
    clock.now = 5
    assert service.subgraph("guide/graphrag") == first
    clock.now = 20  # expired
    service.subgraph("guide/graphrag")
    service.path("GraphRAG", "Cypher")
    service.topn(["Neo4j"], "guide")
    service.ingest(UNITS[:1], ENTITIES)  # writes clear the cache
    service.topn(["Neo4j"], "guide")
    rows = lines(log.path)
    assert all(set(r) == FIELDS for r in rows)
    assert [r["cache_hit"] for r in rows] == [False, True, True, False, False, False, False]
    assert rows[0]["query"] == {
        "op": "subgraph",
        "doc_id": "guide/graphrag",
        "entity_names": None,
        "max_hops": 2,
        "limit": 30,
        "scope": scope_key(Principal.anonymous()),  # the scope key, never who asked
    }
    assert [r["result_count"] for r in rows] == [10, 10, 10, 10, 3, 2, 2]
    assert all(isinstance(r["latency_ms"], float) and r["latency_ms"] >= 0 for r in rows)
    assert str(rows[0]["timestamp"]).endswith("Z")
    assert [e.cache_hit for e in log.read()] == [r["cache_hit"] for r in rows]


def test_bad_requests_are_not_logged(store: GraphStore, tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path / "log.jsonl")
    service = GraphService(store, log=log)
    with pytest.raises(BadRequestError):
        service.subgraph("", None)
    assert log.read() == []


def test_boost_is_logged_and_degrades(store: GraphStore, tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path / "log.jsonl")
    service = GraphService(store, log=log, boost_timeout_s=5.0, entities_alone=True)
    service.ingest(UNITS, ENTITIES)
    ok = service.booster.boost_entities(["stj/resp-1#0", "stj/resp-2#0"], ["STJ"])
    spec = math.log(5 / 2) / math.log(5)  # STJ: 2 of the graph's 5 chunks
    assert ok.scores == pytest.approx({"stj/resp-1#0": spec, "stj/resp-2#0": 0.9 * spec})
    service.close()
    failed = service.booster.boost_entities(["stj/resp-1#0"], ["STJ"])
    assert failed.scores == {} and failed.warning
    rows = lines(log.path)
    assert [r["result_count"] for r in rows] == [2, 0]
    assert rows[1]["query"]["warning"] == failed.warning  # type: ignore[index]


def test_boost_scores_every_unit_by_specificity(store: GraphStore) -> None:
    service = GraphService(store, entities_alone=True)
    service.ingest(UNITS, ENTITIES)
    result = service.booster.boost_entities(["stj/resp-1#0", "stj/resp-2#0"], ["stj"])
    spec = math.log(5 / 2) / math.log(5)
    assert result.scores == pytest.approx({"stj/resp-1#0": spec, "stj/resp-2#0": 0.9 * spec})


def test_boost_reads_the_corpus_size_again_after_a_write(store: GraphStore) -> None:
    service = GraphService(store, entities_alone=True)
    service.ingest(UNITS[:3], ENTITIES)  # Neo4j in all 3 chunks: says nothing
    assert service.booster.boost_entities(["guide/graphrag#1"], ["Neo4j"]).scores == {
        "guide/graphrag#1": 0.0
    }
    service.ingest(UNITS[3:], ENTITIES)  # now 3 of 5
    spec = math.log(5 / 3) / math.log(5)
    boost = service.booster.boost_entities(["guide/graphrag#1"], ["Neo4j"])
    assert boost.scores == pytest.approx({"guide/graphrag#1": 0.9 * spec})


def test_without_curated_evidence_the_graph_is_not_read_unless_entities_count_alone(
    store: GraphStore,
) -> None:
    probe = ConcurrencyProbe(store, delay_s=0.0)
    service = GraphService(probe)
    service.ingest(UNITS, ENTITIES)  # entities, no Criterio, Fato or Prova
    ids = ["stj/resp-1#0", "stj/resp-2#0"]
    assert service.booster.boost_entities(ids, ["STJ"]).warning is None
    calls = probe.calls
    for _ in range(5):
        assert service.booster.boost_entities(ids, ["STJ"]).scores == dict.fromkeys(ids, 0.0)
    assert probe.calls == calls  # answered by the gate, nothing read
    service.write_records(
        loads_records(
            '{"kind":"edge","type":"HAS_FATO","source":"Doc:stj/resp-2","target":"Fato:f"}'
        )
    )
    spec = math.log(5 / 2) / math.log(5)
    with_evidence = service.booster.boost_entities(
        ids, ["STJ"]
    ).raw  # now the entities count, beside it
    assert with_evidence == pytest.approx({"stj/resp-1#0": spec, "stj/resp-2#0": 0.9 * spec + 0.5})


def test_the_setting_lets_entities_count_alone(tmp_path: Path) -> None:
    on = TrilhaSettings(workspace=tmp_path, kg_entities_alone=True)
    service = GraphService.from_settings(on)
    try:
        service.ingest(UNITS, ENTITIES)
        assert service.booster.boost_entities(["stj/resp-1#0"], ["STJ"]).raw["stj/resp-1#0"] > 0
    finally:
        service.close()
    assert not TrilhaSettings().kg_entities_alone


def test_context_md(store: GraphStore) -> None:
    service = GraphService(store)
    service.ingest(UNITS, ENTITIES)
    text = service.context_md("guide/graphrag", ["GraphRAG", "Cypher"], category="guide", lang="zh")
    assert text.startswith("# 问题背景\n- 查询实体：GraphRAG, Cypher\n")
    assert "- Entity:GraphRAG --RELATED (0.50)--> Entity:Neo4j\n" in text
    assert "# 推荐文档（Top 5)\n1. **GraphRAG intro**" in text


def test_open_graph_store(tmp_path: Path) -> None:
    assert open_graph_store(TrilhaSettings(graph_backend="none")) is None
    with pytest.raises(ConfigurationError):
        open_graph_store(TrilhaSettings(graph_backend="bolt"))
    settings = TrilhaSettings(graph_backend="falkordb", workspace=tmp_path)
    store = open_graph_store(settings)
    assert isinstance(store, FalkorDBStore) and (tmp_path / "graph" / "falkordb.sock").exists()
    assert store.server is not None
    sock = store.server.socket_path
    remote = open_graph_store(TrilhaSettings(graph_url=f"unix://{sock}"))
    assert isinstance(remote, FalkorDBStore) and remote.server is None
    remote.write("CREATE (:Doc {id: 'x'})")
    assert store.run("MATCH (d:Doc) RETURN d.id AS id") == [{"id": "x"}]
    remote.close()
    store.close()
    service = GraphService.from_settings(settings)
    assert service.log is not None and service.log.path == tmp_path / "graph/retrieval-log.jsonl"
    service.close()
    with pytest.raises(ConfigurationError):
        GraphService.from_settings(TrilhaSettings(graph_backend="none"))


def test_open_bolt_store(arcadedb: object) -> None:
    url = arcadedb.url  # type: ignore[attr-defined]
    settings = TrilhaSettings(
        graph_backend="bolt",
        graph_url=url,
        graph_user="root",
        graph_password=arcadedb.password,  # type: ignore[attr-defined]
        graph_database="trilha",
    )
    store = open_graph_store(settings)
    assert isinstance(store, BoltGraphStore)
    assert "ArcadeDB" in store.server_agent()
    assert store.run("RETURN 1 AS one") == [{"one": 1}]
    store.close()


class Reads(ConcurrencyProbe):
    """The probe, keeping each read's statement and unit ids."""

    def __init__(self, inner: GraphStore) -> None:
        super().__init__(inner, delay_s=0.0)
        self.reads: list[tuple[str, object]] = []

    def run(
        self, cypher: str, params: Params | None = None, *, timeout_s: float | None = None
    ) -> list[Row]:
        self.reads.append((cypher, (params or {}).get("unit_ids")))
        return super().run(cypher, params, timeout_s=timeout_s)


def test_a_boost_read_is_planned_ahead_once_and_reads_no_unit(store: GraphStore) -> None:
    probe = Reads(store)
    service = GraphService(probe, boost_timeout_s=5.0)
    service.ingest(UNITS, ENTITIES)
    ids = ["stj/resp-1#0", "stj/resp-2#0"]
    probe.reads.clear()

    def boost_reads() -> list[object]:
        return [u for c, u in probe.reads if "$unit_ids" in c]

    # no curated evidence: the graph is asked whether it holds any, no read is planned
    planning = service.booster.prepare("What did the STJ decide?")
    assert planning is not None and planning.result(5) is None
    assert len(probe.reads) == 1 and boost_reads() == []
    assert service.booster.prepare("what was decided") is None  # once per principal scope
    record = '{"kind":"edge","type":"HAS_FATO","source":"Doc:stj/resp-2","target":"Fato:f1"}'
    service.write_records(loads_records(record))
    # another scope: the read without entities is planned first, then the one with them
    ana = Principal(user_id="ana")
    planning = service.booster.prepare("what was decided", ana)
    assert planning is not None and planning.result(5) is None
    assert service.booster.prepare("What did the STJ decide?", ana) is None
    assert service.booster.prepare("what was decided", Principal(user_id="ana")) is None
    deadline = time.monotonic() + 5  # the other read is planned next, in the background
    while len(boost_reads()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    reads = [(c, u) for c, u in probe.reads if "$unit_ids" in c]
    assert [u for _, u in reads] == [[], []] and "$entity_keys" in reads[1][0]
    assert "$entity_keys" not in reads[0][0]
    scores, warning = service.booster.boost("what was decided", ids, principal=ana)
    assert (scores, warning) == ({"stj/resp-1#0": 0.0, "stj/resp-2#0": 0.5}, None)
    assert boost_reads() == [[], [], ids]


def test_no_entities_and_no_evidence_means_no_graph_call(store: GraphStore, tmp_path: Path) -> None:
    probe = ConcurrencyProbe(store, delay_s=0.0)
    log = RetrievalLog(tmp_path / "log.jsonl")
    service = GraphService(probe, log=log, boost_timeout_s=5.0)
    service.ingest(UNITS, ENTITIES)
    ids = ["stj/resp-1#0", "stj/resp-2#0"]
    probe.calls = 0
    for _ in range(3):
        assert service.booster.boost_entities(ids, ["", " "]).scores == {
            "stj/resp-1#0": 0.0,
            "stj/resp-2#0": 0.0,
        }
    # the two backfill checks (priors, entity counts), then one evidence check
    assert probe.calls == 3 and log.read() == []
    record = '{"kind":"edge","type":"HAS_FATO","source":"Doc:stj/resp-2","target":"Fato:f1"}'
    service.write_records(loads_records(record))  # a write: ask again
    # one Fato (prior 0.5) is weaker evidence than 1: it is not scaled up to the full boost
    assert service.booster.boost_entities(ids, []).scores == {
        "stj/resp-1#0": 0.0,
        "stj/resp-2#0": 0.5,
    }
    assert [e.query["unit_ids"] for e in log.read()] == [ids]


def test_waiting_for_the_planned_read_counts_within_the_boost_timeout(store: GraphStore) -> None:
    """A search that waits for :meth:`prepare`'s planning of a slow graph gives up at the
    boost's timeout, not after the wait and a whole timeout more for its own read."""
    probe = ConcurrencyProbe(store, delay_s=0.0)
    service = GraphService(probe, boost_timeout_s=0.5, entities_alone=True)
    service.ingest(UNITS, ENTITIES)
    service.booster.boost_entities(["stj/resp-1#0"], ["STJ"])  # the corpus size, read once
    probe.delay_s = 3.0
    assert service.booster.prepare("What did the STJ decide?") is not None
    start = time.perf_counter()
    result = service.booster.boost_entities(["stj/resp-1#0", "stj/resp-2#0"], ["STJ"])
    elapsed = time.perf_counter() - start
    assert result.scores == {} and "graph slower than" in (result.warning or "")
    assert 0.5 <= elapsed < 0.85  # before: 1.0, the wait and a whole timeout
