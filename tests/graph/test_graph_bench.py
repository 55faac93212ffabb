"""The benchmark builds its synthetic graph and reports every number (tiny sizes here)."""

from __future__ import annotations

import pytest

from trilha.errors import ConfigurationError
from trilha.graph.bench import build_synthetic, run_bench
from trilha.graph.stores.base import GraphStore


def test_bench_small(store: GraphStore) -> None:
    result = run_bench(store, 200, 600, n_queries=5)
    assert result["backend"] == store.name
    assert (result["entities"], result["edges"], result["docs"], result["chunks"]) == (
        200,
        600,
        10,
        20,
    )
    for key in ("build_seconds", "subgraph_p50_ms", "path_p50_ms", "topn_p50_ms"):
        assert result[key] >= 0
    rel = store.run("MATCH (:Entity)-[r:RELATED]->(:Entity) RETURN count(r) AS n")
    assert rel == [{"n": 600}]
    with pytest.raises(ConfigurationError):
        build_synthetic(store, 10, 10)
