"""One model cache per user: a model is exported once, whichever workspace or process asks first,
never half-visible, loaded once per process, and a workspace's own older export still serves."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.conftest import make_docs, packaged_export
from trilha.encode import onnx_export, sentence_transformers
from trilha.encode.onnx_export import export_once, model_cache, older_key
from trilha.encode.onnx_folder import ONNX_FILE
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder, resolve_model_path
from trilha.errors import ConfigurationError
from trilha.settings import PACKAGED_MODEL, TrilhaSettings
from trilha.workspace import Workspace


@pytest.fixture()
def exported(embedder: SentenceTransformerEmbedder) -> Path:
    """The packaged encoder's export in the session's model cache."""
    embedder.encode_queries(["warm up"])
    return packaged_export()


@pytest.fixture()
def exports(monkeypatch: pytest.MonkeyPatch, exported: Path) -> list[str]:
    """Each export asked for, by model path: a copy of the session's export stands in for it."""
    calls: list[str] = []

    def export(path: str, folder: Path) -> None:
        calls.append(path)
        shutil.copytree(exported, folder, dirs_exist_ok=True)

    monkeypatch.setattr(sentence_transformers, "_export_onnx", export)
    return calls


def _settings(cache: Path) -> TrilhaSettings:
    return TrilhaSettings(graph_backend="none", embedding_model=PACKAGED_MODEL, model_cache=cache)


def test_the_default_folder_is_the_user_s_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_cache(Path("~/models")) == Path.home() / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert model_cache() == Path("/xdg/trilha/models")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # not absolute: ignored, as the spec says
    assert model_cache() == Path.home() / ".cache" / "trilha" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert model_cache() == Path.home() / ".cache" / "trilha" / "models"
    monkeypatch.setenv("TRILHA_MODEL_CACHE", "/elsewhere")
    assert SentenceTransformerEmbedder()._cache_dir == Path("/elsewhere")


def test_two_workspaces_export_once_and_share_the_loaded_model(
    tmp_path: Path, exports: list[str], exported: Path
) -> None:
    settings = _settings(tmp_path / "cache")
    with (
        Workspace.open(tmp_path / "a", settings, create=True) as a,
        Workspace.open(tmp_path / "b", settings, create=True) as b,
    ):
        a.ingest(make_docs())
        b.ingest(make_docs())
        found = [[h.unit.doc_id for h in ws.search("VPN notebook", top_k=2).hits] for ws in (a, b)]
        loaded = [ws.embedder._load() for ws in (a, b)]  # type: ignore[attr-defined]
    assert found[0] == found[1] and "pol-remote" in found[0]
    assert len(exports) == 1
    assert loaded[0].model is loaded[1].model  # type: ignore[attr-defined]
    assert sorted(p.name for p in (tmp_path / "cache").glob("encoder-*")) == [exported.name]
    assert not (tmp_path / "a" / "models").exists() and not (tmp_path / "b" / "models").exists()


def test_a_second_process_finds_the_export(tmp_path: Path, exported: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(exported, cache / exported.name)
    script = textwrap.dedent(
        """
        import sys
        from trilha.encode import sentence_transformers as st

        def refuse(path, folder):
            raise AssertionError("exported again")

        st._export_onnx = refuse
        print(st.SentenceTransformerEmbedder().encode_queries(["vpn"]).shape)
        print(sorted(m for m in ("torch", "optimum") if m in sys.modules))
        """
    )
    env = {**os.environ, "TRILHA_MODEL_CACHE": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split("\n")[:2] == ["(1, 384)", "[]"]


def test_a_workspace_with_its_own_older_export_keeps_using_it(
    tmp_path: Path, exports: list[str], exported: Path
) -> None:
    root = tmp_path / "ws"
    name = f"encoder-{older_key(resolve_model_path(PACKAGED_MODEL), weights=False)}"
    shutil.copytree(exported, root / "models" / name)
    with Workspace.open(root, _settings(tmp_path / "cache"), create=True) as ws:
        ws.ingest(make_docs())
        assert "pol-remote" in [h.unit.doc_id for h in ws.search("VPN notebook", top_k=2).hits]
    assert exports == [] and not (tmp_path / "cache").exists()


_EXPORTER = """
import sys, time
from pathlib import Path
from trilha.encode.onnx_export import export_once

def write(tmp):
    with open(sys.argv[2], "a") as log:
        log.write(sys.argv[3] + "\\n")
    (tmp / "onnx").mkdir()
    time.sleep(0.5)  # the other process starts meanwhile
    (tmp / "onnx" / "model.onnx").write_text(sys.argv[3])

export_once(Path(sys.argv[1]), lambda f: (f / "onnx" / "model.onnx").exists(), write)
"""


def test_two_processes_exporting_at_once_leave_one_whole_copy(tmp_path: Path) -> None:
    folder, log = tmp_path / "cache" / "encoder-x", tmp_path / "writes.log"
    procs = [
        subprocess.Popen([sys.executable, "-c", _EXPORTER, str(folder), str(log), name])
        for name in ("first", "second")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    writer = log.read_text().split()
    assert len(writer) == 1  # the other waited, then found it
    assert (folder / ONNX_FILE).read_text() == writer[0]
    assert sorted(p.name for p in folder.parent.iterdir()) == [".locks", "encoder-x"]


def test_without_a_lock_racing_exporters_still_leave_one_whole_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where there are no file locks (Windows) both export; the first rename wins."""
    monkeypatch.setattr(onnx_export, "fcntl", None)
    folder = tmp_path / "encoder-x"
    both = threading.Barrier(2)
    seen: list[bool] = []

    def ready(f: Path) -> bool:
        return (f / ONNX_FILE).exists()

    def write(tmp: Path) -> None:
        (tmp / "onnx").mkdir()
        (tmp / ONNX_FILE).write_text(threading.current_thread().name)
        both.wait(timeout=10)  # both have written before either renames
        seen.append(not folder.exists() or ready(folder))  # never half there

    threads = [
        threading.Thread(target=export_once, args=(folder, ready, write), name=n) for n in "ab"
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert seen == [True, True]
    assert (folder / ONNX_FILE).read_text() in ("a", "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".locks", "encoder-x"]


def test_a_failed_export_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "encoder-x"

    def write(tmp: Path) -> None:
        (tmp / "half").write_text("x")
        raise RuntimeError("export failed")

    with pytest.raises(RuntimeError):
        export_once(folder, lambda f: f.exists(), write)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".locks"]


def test_a_cache_that_cannot_be_written_says_which_setting_to_change(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("in the way")
    folder = tmp_path / "file" / "models" / "encoder-x"
    with pytest.raises(ConfigurationError, match="point TRILHA_MODEL_CACHE at a folder"):
        export_once(folder, lambda f: f.exists(), lambda tmp: None)
