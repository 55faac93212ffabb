"""The int8 column of a lexical snapshot's vectors: what exact filtered search scores first.

Its candidates must hold the float top of any set of rows (the search rescored them from the
dense index's own vectors), snapshots extending one another must share its buffers without
changing what an older one reads, and a saved column is read back mapped, or not at all when
it is damaged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from trilha.index.row_vectors import CODES, RESCORE, SCALES, RowVectors, quantised

DIM = 384


class Vectors:
    """Unit vectors by id: what the dense index's ``vectors`` returns."""

    def __init__(self, n: int, seed: int = 3) -> None:
        rng = np.random.default_rng(seed)
        v = rng.standard_normal((n, DIM)).astype(np.float32)
        self.matrix = v / np.linalg.norm(v, axis=1, keepdims=True)
        self.ids = [f"u{i}" for i in range(n)]
        self.dimension = DIM
        self.asked = 0

    def vectors(self, unit_ids: Sequence[str]) -> Mapping[str, npt.NDArray[np.float32]]:
        self.asked += len(unit_ids)
        return {u: self.matrix[int(u[1:])] for u in unit_ids if int(u[1:]) < len(self.ids)}


def test_the_codes_approximate_the_cosines_to_a_few_thousandths() -> None:
    source = Vectors(2_000)
    codes, scales = quantised(source.matrix)
    approx = (codes.astype(np.float32) * scales[:, None]) @ source.matrix[0]
    assert np.abs(approx - source.matrix @ source.matrix[0]).max() < 0.005
    assert quantised(np.zeros((2, DIM), np.float32))[1].tolist() == [0.0, 0.0]  # not found


def test_the_candidates_hold_the_exact_top_of_any_rows() -> None:
    source = Vectors(20_000)
    column = RowVectors.fetched(source.ids, source)
    rng = np.random.default_rng(5)
    for _ in range(20):
        rows = np.flatnonzero(rng.random(len(source.ids)) < 0.1)
        query = source.matrix[int(rng.integers(0, len(source.ids)))] + 0.3 * rng.standard_normal(
            DIM
        ).astype(np.float32)
        picked = column.candidates(query, rows, 10)
        assert picked is not None and len(picked) == RESCORE * 10
        exact = rows[np.argsort(-(source.matrix[rows] @ query))[:10]]
        assert set(exact.tolist()) <= set(picked.tolist())
        assert set(picked.tolist()) <= set(rows.tolist())
    assert (
        column.candidates(source.matrix[0], rows[:3], 10).tolist()
        == sorted(  # type: ignore[union-attr]
            rows[:3].tolist(), key=lambda r: -float(source.matrix[r] @ source.matrix[0])
        )
    )
    assert column.candidates(source.matrix[0], np.zeros(0, np.int64), 10).size == 0  # type: ignore[union-attr]


def test_a_row_without_a_vector_makes_its_scan_decline() -> None:
    source = Vectors(100)
    column = RowVectors.fetched([*source.ids[:50], "u999", *source.ids[50:]], source)
    assert column.candidates(source.matrix[0], np.arange(40, 60), 5) is None  # row 50
    assert column.candidates(source.matrix[0], np.arange(0, 50), 5) is not None


def test_a_vector_found_again_completes_the_column() -> None:
    source = Vectors(100)
    ids = [*source.ids[:50], "u150", *source.ids[50:]]
    column = RowVectors.fetched(ids, source).extended(["u160"], source)
    assert column.completed([*ids, "u160"], source) is column  # still not found
    later = Vectors(200)  # a repair encoded them
    done = column.completed([*ids, "u160"], later)
    assert done.candidates(later.matrix[150], np.arange(102), 1) is not None
    picked = done.candidates(later.matrix[160], np.arange(102), 1)
    assert picked is not None and picked[0] == 101


def test_extending_snapshots_share_the_buffer_and_never_change_an_older_one() -> None:
    source = Vectors(5_000)
    base = RowVectors.fetched(source.ids[:1_000], source)
    first = base.extended(source.ids[1_000:1_500], source)
    second = first.extended(source.ids[1_500:2_000], source)
    # another snapshot made from ``first`` (a writer's next one while a reader holds ``first``)
    fork = first.extended(source.ids[3_000:3_100], source)
    rows = np.arange(2_000)
    codes, _ = second.taken(rows)
    assert np.array_equal(codes, quantised(source.matrix[:2_000])[0])
    assert len(first) == 1_500 and len(second) == 2_000 and len(fork) == 1_600
    fork_codes, _ = fork.taken(np.arange(1_500, 1_600))
    assert np.array_equal(fork_codes, quantised(source.matrix[3_000:3_100])[0])
    again, _ = second.taken(np.arange(1_500, 2_000))  # the fork copied; it wrote nothing here
    assert np.array_equal(again, quantised(source.matrix[1_500:2_000])[0])
    assert base.extended([], source) is base
    kept = np.array([1, 999, 1_000, 1_999])
    compact = second.compacted(kept)
    assert np.array_equal(compact.taken(np.arange(4))[0], quantised(source.matrix[kept])[0])


def test_a_saved_column_is_read_back_mapped_or_not_at_all(tmp_path: Path) -> None:
    source = Vectors(3_000)
    column = RowVectors.fetched(source.ids[:2_000], source).extended(source.ids[2_000:], source)
    column.save(tmp_path)
    read = RowVectors.load(tmp_path, 3_000)
    assert read is not None
    assert isinstance(read.taken(np.arange(2))[0], np.ndarray)
    assert np.array_equal(read.taken(np.arange(3_000))[0], column.taken(np.arange(3_000))[0])
    assert RowVectors.load(tmp_path, 2_999) is None  # another base's rows
    (tmp_path / SCALES).write_bytes(b"damaged")
    assert RowVectors.load(tmp_path, 3_000) is None
    (tmp_path / CODES).unlink()
    assert RowVectors.load(tmp_path, 3_000) is None


@pytest.mark.parametrize("n", [1, 7])
def test_few_rows_are_all_candidates(n: int) -> None:
    source = Vectors(n)
    column = RowVectors.fetched(source.ids, source)
    picked = column.candidates(source.matrix[0], np.arange(n), 10)
    assert picked is not None and sorted(picked.tolist()) == list(range(n))
    assert picked[0] == 0  # the query's own vector first
