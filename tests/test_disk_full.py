"""A full disk: one line naming the disk and the bytes needed, exit 2, nothing half-written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from trilha.diskspace import disk_full_errors, ensure_room, mount_of
from trilha.encode.onnx_export import write_atomically
from trilha.errors import DiskFullError


def _fill() -> None:
    """Write to /dev/full: the kernel's real ENOSPC."""
    with open("/dev/full", "wb") as full:
        full.write(b"x" * 65536)
        full.flush()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_enospc_becomes_one_line_naming_the_disk(tmp_path: Path) -> None:
    with pytest.raises(DiskFullError) as err, disk_full_errors(tmp_path / "ws", 1234):
        _fill()
    message = str(err.value)
    assert "\n" not in message
    assert f"the disk at {mount_of(tmp_path)} is full for" in message
    assert "about 1,234 bytes needed" in message
    assert isinstance(err.value.__cause__, OSError)


def test_other_errors_pass_through(tmp_path: Path) -> None:
    with pytest.raises(PermissionError), disk_full_errors(tmp_path):
        raise PermissionError(13, "Permission denied")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_model_export_on_a_full_disk_says_so_and_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "models" / "encoder-x"

    def export(tmp: Path) -> None:  # writes a first file, then the disk is full
        tmp.mkdir(parents=True)
        (tmp / "config.json").write_text("{}")
        _fill()

    with pytest.raises(DiskFullError, match="is full for") as err:
        write_atomically(folder, export)
    assert "TRILHA_EMBEDDING_MODEL" not in str(err.value)
    assert not folder.exists() and not folder.with_name("encoder-x.tmp").exists()


def test_ensure_room_names_the_disk_and_the_bytes(tmp_path: Path) -> None:
    free = shutil.disk_usage(tmp_path).free
    ensure_room(tmp_path, 1024)  # there is room for a kilobyte
    with pytest.raises(DiskFullError) as err:
        ensure_room(tmp_path / "new" / "ws", free)
    assert str(mount_of(tmp_path)) in str(err.value)
    assert f"bytes free, about {free + 8 * 1024 * 1024:,} bytes needed" in str(err.value)


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 20 MB tmpfs (needs root and a kernel that lets this process mount)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_ingest_on_a_full_disk_is_one_line_and_exit_2(small_disk: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# VPN\n\nThe VPN policy needs a company laptop.\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "trilha.cli.main", "ingest", str(corpus), "-w",
         str(small_disk / "ws")],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr  # was -7 (SIGBUS) in qdrant-edge's memory maps
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"the disk at {small_disk} is full for {small_disk / 'ws'}" in lines[0]
    assert "bytes needed" in lines[0]
    assert list(small_disk.iterdir()) == []  # nothing half-written


def test_a_copy_onto_a_full_disk_names_the_target_disk_and_the_source_size(
    small_disk: Path, tmp_path: Path
) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(os.urandom(24 * 1024 * 1024))  # more than the 20 MB disk holds
    folder = small_disk / "models" / "encoder-x"

    def export(tmp: Path) -> None:  # as save_pretrained copies the exported file
        tmp.mkdir(parents=True)
        shutil.copyfile(model, tmp / "model.onnx")

    with pytest.raises(DiskFullError) as err:
        write_atomically(folder, export)
    assert f"the disk at {small_disk} is full for {folder.with_name('encoder-x.tmp')}" in str(
        err.value
    )
    assert f"about {24 * 1024 * 1024:,} bytes needed" in str(err.value)
    assert list((small_disk / "models").iterdir()) == []
