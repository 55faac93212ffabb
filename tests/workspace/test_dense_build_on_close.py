"""What closing a workspace does with an HNSW build of its dense index that its writes made due:
finished by default (``trilha ingest`` leaves a built index), cancelled for a long-lived process
shutting down (``finish_build=False``: the service's), the points kept either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import load_path
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace


def _shard_counts(path: Path) -> tuple[int, int]:
    """(points, points in a graph) of the workspace's shard, read from its folder."""
    import qdrant_edge

    shard = qdrant_edge.EdgeShard.load(str(path / "qdrant-edge"))
    try:
        info = shard.info()
        return int(info.points_count), int(info.indexed_vectors_count)
    finally:
        shard.close()


@pytest.mark.parametrize("finish", [True, False])
def test_close_finishes_or_cancels_the_build_the_ingest_made_due(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, finish: bool
) -> None:
    path = tmp_path / "ws"
    settings = TrilhaSettings(dense_hnsw_threshold=20, graph_backend="none")
    with Workspace.open(path, settings, embedder=embedder, create=True) as ws:
        ws.ingest(load_path(SAMPLES))
        units = len(ws)
        ws.close(finish_build=finish)
    assert units >= 20
    points, indexed = _shard_counts(path)
    assert points == units
    assert indexed == (points if finish else 0)
    assert sorted(p.name for p in path.iterdir() if p.name.startswith("qdrant-edge")) == [
        "qdrant-edge"
    ]
