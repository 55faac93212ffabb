"""The embedded shard's HNSW, on real qdrant-edge with a low threshold: exact below it, built in
a child process above it, searchable and writable while it builds, filters exact when selective."""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from trilha.index import edge_hnsw
from trilha.index.edge_hnsw import HnswPlan
from trilha.index.filter_input import coerce_filters
from trilha.index.filters import FilterExpr
from trilha.index.qdrant_edge import QdrantEdgeIndex
from trilha.types import TextUnit

DIM = 48
PLAN = HnswPlan(threshold=600, m=16, ef_construct=100, ef=128, threads=1, quiet_s=0.2)


def _vectors(n: int, seed: int = 1) -> npt.NDArray[np.float32]:
    """Points around 40 centres (structure an HNSW graph can follow)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIM)).astype(np.float32)
    v = centres[rng.integers(0, 40, n)] + 0.7 * rng.standard_normal((n, DIM)).astype(np.float32)
    return np.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float32)


def _units(start: int, n: int) -> list[TextUnit]:
    return [
        TextUnit(
            unit_id=f"u{i}",
            doc_id=f"d{i // 2}",
            text="x",
            lang="pt" if i % 2 else "en",
            tags=["rare"] if i % 50 == 0 else ["common"],
        )
        for i in range(start, start + n)
    ]


def _fill(index: QdrantEdgeIndex, vectors: npt.NDArray[np.float32], start: int = 0) -> None:
    for at in range(0, len(vectors), 256):  # an ingest's batches
        part = vectors[at : at + 256]
        index.upsert(_units(start + at, len(part)), part)


def _ids(hits: list[tuple[str, float]]) -> list[str]:
    return [u for u, _ in hits]


def _recall(
    index: QdrantEdgeIndex, queries: npt.NDArray[np.float32], expr: FilterExpr | None = None
) -> float:
    got = [
        len(set(_ids(index.search(q, 10, expr))) & set(_ids(index.search(q, 10, expr, exact=True))))
        for q in queries
    ]
    return sum(got) / (10 * len(queries))


def _open(tmp_path: Path, plan: HnswPlan | None = PLAN) -> QdrantEdgeIndex:
    return QdrantEdgeIndex.open(tmp_path / "qdrant-edge", DIM, hnsw=plan)


def _reopened_count(tmp_path: Path) -> int:
    """Points of the shard opened again; what is left beside it must be only the shard."""
    reopened = _open(tmp_path)
    try:
        count = reopened.count()
    finally:
        reopened.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qdrant-edge"]
    return count


def test_below_the_threshold_nothing_is_built_and_search_is_exact(tmp_path: Path) -> None:
    index = _open(tmp_path)
    try:
        vectors = _vectors(500)
        _fill(index, vectors)
        index.settle()
        state = index.hnsw_state()
        assert state == {"points": 500, "indexed": 0, "building": False, "builds": 0}
        for q in _vectors(5, seed=9):
            assert index.search(q, 10) == index.search(q, 10, exact=True)
    finally:
        index.close()
    assert not (tmp_path / "qdrant-edge.next").exists()


def test_above_it_a_build_is_swapped_in_with_recall_against_exact(tmp_path: Path) -> None:
    index = _open(tmp_path)
    try:
        _fill(index, _vectors(2400))
        index.settle()
        state = index.hnsw_state()
        assert state["builds"] == 1 and state["points"] == 2400
        assert state["indexed"] == 2400
        assert _recall(index, _vectors(20, seed=5)) >= 0.95
        filters = coerce_filters({"lang": "pt"})
        assert _recall(index, _vectors(20, seed=6), expr=filters) >= 0.95
        assert all(int(u[1:]) % 2 for u, _ in index.search(_vectors(1, 7)[0], 10, filters))
    finally:
        index.close()
    reopened = _open(tmp_path)  # the built shard is the workspace's from now on
    try:
        assert reopened.hnsw_state()["indexed"] == 2400
    finally:
        reopened.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qdrant-edge"]


def test_a_selective_filter_is_searched_exactly(tmp_path: Path) -> None:
    """48 points carry the rare tag, fewer than the threshold: the planner scores them all."""
    index = _open(tmp_path)
    try:
        _fill(index, _vectors(2400))
        index.settle()
        rare = coerce_filters({"tags": ["rare"]})
        for q in _vectors(10, seed=8):
            assert index.search(q, 10, rare) == index.search(q, 10, rare, exact=True)
    finally:
        index.close()


def test_searches_and_writes_during_the_build_stay_correct(tmp_path: Path) -> None:
    index = _open(tmp_path)
    queries = _vectors(8, seed=3)
    try:
        _fill(index, _vectors(3000))
        index._hurry.set()  # build now
        deadline = time.monotonic() + 60
        while not (tmp_path / "qdrant-edge.next").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert index.hnsw_state()["building"]
        searched = 0
        extra = _vectors(40, seed=11)
        index.upsert(_units(5000, 40), extra)  # written meanwhile: points, a deleted document
        index.delete_doc("d3")
        index.delete_units(["u10"])
        while index.hnsw_state()["building"] and time.monotonic() < deadline:
            for q in queries:  # and searched on the old shard, exactly as before
                got, want = index.search(q, 10), index.search(q, 10, exact=True)
                if index.builds == 0:  # not swapped yet
                    assert got == want
                    searched += 1
        assert searched > 0
        index.settle()
        assert index.hnsw_state()["builds"] == 1
        assert index.count() == 3000 + 40 - 3
        assert not {"u6", "u7", "u10"} & set(index.unit_ids())
        for i, v in enumerate(extra):  # the writes made during the build are in the built shard
            assert index.search(v, 1)[0][0] == f"u{5000 + i}"
        assert _recall(index, queries) >= 0.95
    finally:
        index.close()


def test_a_build_the_writes_outran_is_abandoned_and_made_again(tmp_path: Path) -> None:
    index = _open(tmp_path)
    try:
        _fill(index, _vectors(1200))
        index._hurry.set()
        deadline = time.monotonic() + 60
        while not (tmp_path / "qdrant-edge.next").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        _fill(index, _vectors(700, seed=4), start=1200)  # more than the threshold meanwhile
        index.settle()
        state = index.hnsw_state()
        assert state["points"] == state["indexed"] == 1900 and state["builds"] == 1
    finally:
        index.close()


def test_a_shard_opened_without_a_plan_is_never_built(tmp_path: Path) -> None:
    index = _open(tmp_path, plan=None)
    try:
        _fill(index, _vectors(1200))
        index.settle()
        assert index.hnsw_state()["indexed"] == 0
    finally:
        index.close()


@pytest.mark.parametrize("cut", ["copy", "renamed", "swapped"])
def test_what_a_killed_build_left_is_undone_on_open(tmp_path: Path, cut: str) -> None:
    index = _open(tmp_path, plan=None)
    _fill(index, _vectors(300))
    index.close()
    folder = tmp_path / "qdrant-edge"
    shutil.copytree(folder, tmp_path / "qdrant-edge.next")
    if cut in ("renamed", "swapped"):  # died inside the swap: the old shard comes back
        edge_hnsw.swap_in(folder)
        if cut == "renamed":
            (tmp_path / "qdrant-edge").rename(tmp_path / "qdrant-edge.next")
    assert _reopened_count(tmp_path) == 300


def test_a_built_copy_that_cannot_be_opened_leaves_the_old_shard_searchable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _open(tmp_path)
    try:
        _fill(index, _vectors(1200))

        def broken(folder: Path) -> None:
            edge_hnsw.swap_in(folder)
            shutil.rmtree(folder / "segments")
            raise OSError("disk trouble")

        monkeypatch.setattr("trilha.index.qdrant_edge.edge_hnsw.swap_in", broken)
        index.settle()
        assert index.hnsw_state() == {"points": 1200, "indexed": 0, "building": False, "builds": 0}
        v = _vectors(1)[0]
        assert index.search(v, 10) == index.search(v, 10, exact=True)
    finally:
        index.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qdrant-edge"]


class _Died(BaseException):
    """The process dying at that point (nothing after it runs)."""


def test_a_drop_of_the_old_shard_cut_short_leaves_the_built_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old shard is deleted only under the trash name: half deleted, it is not taken for
    the shard on the next open (it was restored over the complete built one)."""
    index = _open(tmp_path, plan=None)
    _fill(index, _vectors(900))
    index.close()
    folder = tmp_path / "qdrant-edge"
    shutil.copytree(folder, tmp_path / "qdrant-edge.next")
    edge_hnsw.swap_in(folder)  # the built shard in place, its replay done
    rmtree = shutil.rmtree

    def dies_midway(path: Path, ignore_errors: bool = False) -> None:
        rmtree(Path(path) / "segments")
        raise _Died

    monkeypatch.setattr(edge_hnsw.shutil, "rmtree", dies_midway)
    with pytest.raises(_Died):
        edge_hnsw.drop_old(folder)
    monkeypatch.undo()
    assert _reopened_count(tmp_path) == 900


def test_a_swap_refuses_an_old_shard_it_finds(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant-edge"
    for name in ("qdrant-edge", "qdrant-edge.next", "qdrant-edge.old"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mark").write_text(name)
    with pytest.raises(FileExistsError):
        edge_hnsw.swap_in(folder)
    assert (tmp_path / "qdrant-edge.old" / "mark").read_text() == "qdrant-edge.old"
    assert (folder / "mark").read_text() == "qdrant-edge"


def test_a_replay_that_fails_leaves_the_old_shard_with_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The built shard lacks the writes made during its build until the replay: a replay that
    fails puts the old shard back (it was served without them, and the next swap deleted it)."""
    index = _open(tmp_path)
    extra = _vectors(40, seed=11)
    build = edge_hnsw.run_build

    def writes_meanwhile(*args: object) -> bool:
        built = build(*args)  # type: ignore[arg-type]
        index.upsert(_units(5000, 40), extra)  # journaled: the built copy lacks them
        return built

    def fails(*args: object) -> None:
        raise RuntimeError("replay trouble")

    monkeypatch.setattr(edge_hnsw, "run_build", writes_meanwhile)
    monkeypatch.setattr(index, "_replay", fails)
    try:
        _fill(index, _vectors(1200))
        index.settle()
        assert index.hnsw_state() == {"points": 1240, "indexed": 0, "building": False, "builds": 0}
        for i, v in enumerate(extra):
            assert index.search(v, 1)[0][0] == f"u{5000 + i}"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["qdrant-edge"]
        monkeypatch.undo()  # the next build swaps in with the writes
        index.upsert(_units(6000, 600), _vectors(600, seed=12))
        index.settle()
        assert index.hnsw_state() == {
            "points": 1840,
            "indexed": 1840,
            "building": False,
            "builds": 1,
        }
    finally:
        index.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qdrant-edge"]


def test_a_child_that_writes_much_is_not_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A failing child's 100 KB message (an unknown setting's name) is not held in a pipe read
    only at its exit: the build returns when the child exits, with the message's tail."""
    name = "x" * 99_000 + "end-of-the-name"
    monkeypatch.setattr(edge_hnsw, "asdict", lambda plan: {**dataclasses.asdict(plan), name: 1})
    stop = threading.Event()
    timer = threading.Timer(40, stop.set)  # before: the child blocked until this stopped it
    timer.start()
    try:
        start = time.monotonic()
        with caplog.at_level("WARNING", logger="trilha.index.edge_hnsw"):
            built = edge_hnsw.run_build(tmp_path, PLAN, DIM, stop)
    finally:
        timer.cancel()
    assert not built and time.monotonic() - start < 30
    assert "end-of-the-name" in caplog.text


def test_a_close_that_cancels_the_build_leaves_the_shard_unbuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived process shutting down does not wait for a build: the child is killed, the
    copy removed, the shard left exact; the next writer builds it."""
    index = _open(tmp_path)
    build = edge_hnsw.run_build
    started = threading.Event()

    def long_build(folder: Path, plan: HnswPlan, dimension: int, *stop: threading.Event) -> bool:
        started.set()
        while not any(event.is_set() for event in stop):  # minutes at a million points
            time.sleep(0.01)
        return build(folder, plan, dimension, *stop)  # the real child, stopped

    monkeypatch.setattr(edge_hnsw, "run_build", long_build)
    _fill(index, _vectors(1200))
    index._hurry.set()
    assert started.wait(60)
    start = time.monotonic()
    index.close(finish_build=False)
    assert time.monotonic() - start < 10
    assert index.builds == 0
    reopened = _open(tmp_path)
    try:
        assert reopened.hnsw_state() == {
            "points": 1200,
            "indexed": 0,
            "building": False,
            "builds": 0,
        }
    finally:
        reopened.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qdrant-edge"]


def test_the_journal_is_not_cleared_under_a_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write checks for the journal and then adds to it, holding the write lock: the build
    clears the journal only once it holds that lock (before, a write could find None)."""
    index = _open(tmp_path)
    ran, go = threading.Event(), threading.Event()

    def failing_build(*args: object) -> bool:
        ran.set()
        go.wait(60)
        return False

    monkeypatch.setattr(edge_hnsw, "run_build", failing_build)
    try:
        _fill(index, _vectors(1200))
        index._hurry.set()
        assert ran.wait(60)
        with index._lock:  # a write under way
            go.set()
            time.sleep(0.3)
            assert index._journal is not None
        index.settle()
        assert index._journal is None
    finally:
        index.close()
