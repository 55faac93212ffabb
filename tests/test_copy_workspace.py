"""trilha.testing.copying: a workspace copy keeps Qdrant's preallocated files sparse."""

from __future__ import annotations

import os
from pathlib import Path

from trilha.testing.copying import copy_workspace


def test_a_copy_keeps_the_data_and_leaves_the_holes(tmp_path: Path) -> None:
    source = tmp_path / "ws"
    (source / "shard").mkdir(parents=True)
    mapped = source / "shard" / "segment.mmap"
    with open(mapped, "wb") as file:
        file.truncate(64 << 20)  # 64 MB long, nothing written
        file.seek(32 << 20)
        file.write(b"vector bytes")
        file.seek((64 << 20) - 4)
        file.write(b"tail")
    (source / "workspace.json").write_text('{"k": 1}')
    (source / "lock.sock").write_text("")

    copy = copy_workspace(source, tmp_path / "copy", "*.sock")

    assert (copy / "workspace.json").read_text() == '{"k": 1}'
    assert not (copy / "lock.sock").exists()
    copied = copy / "shard" / "segment.mmap"
    assert copied.read_bytes() == mapped.read_bytes()
    if os.stat(mapped).st_blocks * 512 < (8 << 20):  # the file system keeps holes at all
        assert os.stat(copied).st_blocks * 512 < (8 << 20)
