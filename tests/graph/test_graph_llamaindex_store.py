"""The LlamaIndex adapter, over an object with LlamaIndex's ``structured_query`` signature that
runs on a real embedded FalkorDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.graph.conftest import ENTITIES, UNITS
from trilha.errors import BackendUnavailableError
from trilha.graph.build.writer import GraphWriter
from trilha.graph.read.path import path
from trilha.graph.read.subgraph import subgraph
from trilha.graph.stores.dialect import CYPHER, FALKORDB
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.graph.stores.llamaindex import LlamaIndexGraphStore, guess_dialect


class FalkorDBPropertyGraphStore:
    """Same name and ``structured_query`` contract as llama-index-graph-stores-falkordb's."""

    def __init__(self, store: FalkorDBStore) -> None:
        self.store = store
        self.closed = False

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        return self.store.write(query, param_map)

    def close(self) -> None:
        self.closed = True
        self.store.close()


def test_adapter_runs_the_queries(tmp_path: Path) -> None:
    inner = FalkorDBPropertyGraphStore(FalkorDBStore.embedded(tmp_path / "g"))
    store = LlamaIndexGraphStore(inner)
    assert store.dialect is FALKORDB and store.name == "llamaindex:FalkorDBPropertyGraphStore"
    GraphWriter(store).upsert_units(UNITS, ENTITIES)
    assert len(subgraph(store, "guide/graphrag").nodes) == 10
    assert path(store, "GraphRAG", "Cypher").meta.length == 2
    store.close()
    store.close()
    assert inner.closed
    with pytest.raises(BackendUnavailableError):
        store.run("RETURN 1")


class Broken:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_adapter_errors_and_dialect() -> None:
    assert guess_dialect(Broken(None)) is CYPHER
    assert LlamaIndexGraphStore(Broken(None)).run("RETURN 1") == []
    with pytest.raises(BackendUnavailableError, match="expected a list of dicts"):
        LlamaIndexGraphStore(Broken("text")).run("RETURN 1")
    with pytest.raises(BackendUnavailableError, match="boom"):
        LlamaIndexGraphStore(Broken(RuntimeError("boom"))).run("RETURN 1")
