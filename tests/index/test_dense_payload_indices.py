"""Every open gives the embedded shard an index on each filtered payload field, old shards too."""

from __future__ import annotations

from pathlib import Path

from trilha.index.qdrant_edge import QdrantEdgeIndex, _edge
from trilha.index.qdrant_schema import INTEGER_FIELDS, KEYWORD_FIELDS


def test_a_shard_made_without_the_policy_indices_gets_them_on_open(tmp_path: Path) -> None:
    qe = _edge()
    folder = tmp_path / "shard"
    folder.mkdir()
    params = qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine)
    old = qe.EdgeShard.create(str(folder), qe.EdgeConfig(vectors=params))  # no indices at all
    old.update(qe.UpdateOperation.create_field_index("doc_id", qe.PayloadSchemaType.Keyword))
    old.flush()
    old.close()
    index = QdrantEdgeIndex.open(folder, 4)
    try:
        indexed = set(index._live().info().payload_schema)
    finally:
        index.close()
    assert {"acl", "org_id", "project_id", "visibility", "owner_id"} <= indexed
    assert set(KEYWORD_FIELDS) | set(INTEGER_FIELDS) <= indexed


def test_a_field_indexed_as_the_wrong_kind_is_indexed_again_as_the_right_one(
    tmp_path: Path,
) -> None:
    qe = _edge()
    folder = tmp_path / "shard"
    QdrantEdgeIndex.open(folder, 4).close()  # every index made, of the right kind
    old = qe.EdgeShard.load(str(folder))
    old.update(qe.UpdateOperation.create_field_index("date_num", qe.PayloadSchemaType.Keyword))
    old.flush()
    old.close()
    index = QdrantEdgeIndex.open(folder, 4)
    try:
        kinds = {k: v.data_type for k, v in index._live().info().payload_schema.items()}
    finally:
        index.close()
    assert kinds["date_num"] == qe.PayloadSchemaType.Integer
    assert all(kinds[name] == qe.PayloadSchemaType.Keyword for name in KEYWORD_FIELDS)
