"""The lexical index of a real workspace grows by increments and stays what a whole build makes.

After each ingest, replacement and delete the workspace's snapshot must rank and score exactly
as one built whole from the unit store, while reading from the store only the units that
changed and leaving the saved base alone until the index has grown enough to merge; a save
that crashes leaves the previous base readable.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_docs
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.index import lexical_store
from trilha.index.lexical import LexicalIndex
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import TextUnit
from trilha.workspace import Workspace

SETTINGS = TrilhaSettings(graph_backend="none")
QUERIES = ["security incident", "vpn remote work", "férias prazo", "zirconium corrosion"]


def _doc(doc_id: str, text: str) -> SourceDocument:
    return SourceDocument(doc_id=doc_id, text=text, meta={"lang": "en", "tags": ["new"]})


NEW = _doc("zr", "Zirconium alloys resist corrosion in reactor cladding.")


def _open(path: Path, embedder: SentenceTransformerEmbedder) -> Workspace:
    """The workspace at ``path``; a new one holds the eight sample documents."""
    ws = Workspace.open(path, SETTINGS, embedder=embedder, create=True)
    if not len(ws):
        ws.ingest(make_docs())
    return ws


@pytest.fixture()
def ws(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[Workspace]:
    with _open(tmp_path / "ws", embedder) as ws:
        yield ws


def _whole(ws: Workspace) -> LexicalIndex:
    """The snapshot built whole from the unit store now (no base read, nothing saved)."""
    changes = ws.store.changes(0, 0)
    units = [TextUnit.model_validate_json(body) for _, body, _ in changes.added]
    return LexicalIndex.build(units, [t.split() for _, _, t in changes.added])


def _ranked(
    lexical: LexicalIndex, query: str, filters: dict[str, object] | None = None
) -> list[tuple[str, float]]:
    from trilha.index.filter_input import coerce_filters

    flt = coerce_filters(filters) if filters else None
    mask = None if flt is None else lexical.columns.mask(flt)
    scores = lexical.score_all(query)
    return [(lexical.rows[r].unit_id, s) for r, s in lexical.top(scores, 20, mask)]


def _same_as_whole(ws: Workspace) -> None:
    grown, whole = ws.searcher.lexical, _whole(ws)
    assert grown.units == whole.units and len(ws) == len(whole)
    for query in QUERIES:
        assert _ranked(grown, query) == _ranked(whole, query)
        assert _ranked(grown, query, {"tags": ["new"]}) == _ranked(whole, query, {"tags": ["new"]})
    assert ws.count_matching(None) == len(whole)


def _parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the units read back from the store's JSON (each one parsed)."""
    count = [0]
    parse = TextUnit.model_validate_json.__func__  # type: ignore[attr-defined]

    def counting(cls: type[TextUnit], /, *args: object, **kwargs: object) -> TextUnit:
        count[0] += 1
        return parse(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(TextUnit, "model_validate_json", classmethod(counting))
    return count


def test_ingest_replace_and_delete_read_only_what_changed(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical_store, "MERGE_FRACTION", 10.0)  # no merge: segments grow
    base = sorted(p.name for p in (ws.path / "lexical").iterdir())
    before = ws.searcher.lexical
    parsed = _parsed(monkeypatch)
    ws.ingest([NEW])
    after = ws.searcher.lexical
    assert parsed[0] == 1  # the new unit only, not every unit
    assert after.segments == 2 and before.segments == 1 and "zr" not in before.row_of
    assert sorted(p.name for p in (ws.path / "lexical").iterdir()) == base  # base unchanged
    assert _ranked(after, "zirconium corrosion")[0][0].startswith("zr")
    _same_as_whole(ws)
    changes = ws.store.changes(after.last_row, after.seq)
    assert not changes.added and not changes.deleted  # the snapshot is current
    parsed[0] = 0
    ws.ingest([_doc("zr", "Zirconium cladding: a second version about hafnium.")])  # replaced
    assert parsed[0] == 1 and ws.searcher.lexical.dead == 1
    _same_as_whole(ws)
    parsed[0] = 0
    ws.delete("runbook")
    assert parsed[0] == 0 and ws.searcher.lexical.dead > 1  # nothing read back
    _same_as_whole(ws)
    ws.delete("zr")
    _same_as_whole(ws)


def test_growing_past_the_fraction_merges_and_saves_a_new_base(ws: Workspace) -> None:
    first = lexical_store.read(ws.path / "lexical")
    assert first is not None
    ws.ingest([_doc(f"n{i}", f"Note {i} on zirconium and reactor {i}.") for i in range(6)])
    merged = ws.searcher.lexical
    assert merged.segments == 1 and merged.dead == 0  # merged in the ingest
    saved = lexical_store.read(ws.path / "lexical")
    assert saved is not None and saved.generation == merged.generation > first.generation
    assert [p.name for p in (ws.path / "lexical").iterdir() if p.is_dir()] == [
        f"base-{merged.generation}"
    ]
    _same_as_whole(ws)


def test_reopening_reads_the_base_and_catches_up(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ws"
    with _open(path, embedder) as ws:
        monkeypatch.setattr(lexical_store, "MERGE_FRACTION", 10.0)
        ws.ingest([NEW])
        ws.delete("runbook")
        monkeypatch.setattr(lexical_store, "MERGE_FRACTION", 0.25)
        expected = {q: _ranked(ws.searcher.lexical, q) for q in QUERIES}
        units = len(ws)
    with _open(path, embedder) as again:
        lexical = again.searcher.lexical
        assert len(again) == units and lexical.segments == 2  # the base less runbook, zr
        assert {q: _ranked(lexical, q) for q in QUERIES} == expected
        _same_as_whole(again)


def test_a_crashed_save_leaves_the_previous_base_readable(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ws"
    with _open(path, embedder) as ws:
        old = lexical_store.read(path / "lexical")

        def crash(src: object, dst: object) -> None:
            raise OSError("disk full")  # the new base is written, state.json not replaced

        monkeypatch.setattr(os, "replace", crash)
        with pytest.raises(OSError, match="disk full"):
            ws.ingest([_doc(f"n{i}", f"Note {i} on zirconium.") for i in range(6)])
        monkeypatch.undo()
    kept = lexical_store.read(path / "lexical")
    assert kept is not None and old is not None and kept.generation == old.generation
    with _open(path, embedder) as again:
        assert {f"n{i}" for i in range(6)} <= {u.doc_id for u in again.all_units()}
        _same_as_whole(again)


def test_a_base_folder_removed_under_a_reader_is_rebuilt_not_half_read(
    ws: Workspace, tmp_path: Path
) -> None:
    """A reader that finds state.json naming a folder a newer save has just removed builds the
    snapshot from the store instead of reading half of anything."""
    copy = tmp_path / "copy"
    shutil.copytree(ws.path / "lexical", copy)
    state = lexical_store.read(copy)
    assert state is not None
    for folder in copy.iterdir():
        if folder.is_dir():
            shutil.rmtree(folder)
    assert lexical_store.read(copy) is None
    rebuilt = lexical_store.open_index(ws.store, copy, 1.5, 0.75, save=False)
    assert rebuilt.units == ws.searcher.lexical.units
    assert [p.name for p in copy.iterdir()] == ["state.json"]  # nothing written


def test_units_rewritten_in_place_rebuild_the_index(ws: Workspace) -> None:
    """A migration rewrites units without new rows: the log says so, and the next snapshot is
    built whole from the store rather than caught up."""
    rewritten = ws.store.migrate("test-rewrite", "1", lambda body: body.replace('"en"', '"pt"'))
    assert rewritten
    ws.ingest([])  # refreshes the snapshot
    assert {u.unit_id for u in ws.all_units() if u.lang == "pt"} >= set(rewritten)
    _same_as_whole(ws)


@pytest.mark.parametrize("keep", [0, 0.5], ids=["empty", "truncated"])
def test_a_damaged_base_file_is_rebuilt_from_the_store(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    caplog: pytest.LogCaptureFixture,
    keep: float,
) -> None:
    """An empty or truncated ``terms.npz`` (EOFError, BadZipFile when read) is a base that
    cannot be used: the workspace opens on a snapshot built from the store, and saves it."""
    path = tmp_path / "ws"
    _open(path, embedder).close()
    (terms,) = (path / "lexical").glob("base-*/terms.npz")
    data = terms.read_bytes()
    terms.write_bytes(data[: int(len(data) * keep)])
    with caplog.at_level("WARNING", logger=lexical_store.__name__), _open(path, embedder) as ws:
        _same_as_whole(ws)
    assert "unreadable" in caplog.text
    assert lexical_store.read(path / "lexical") is not None  # saved again, whole


def test_a_saved_base_is_on_the_disk_before_its_name_is(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every staged file and the folders are flushed before the rename that names them, so a
    power loss cannot leave state.json naming an empty or truncated file."""
    events: list[tuple[str, str]] = []
    fsync, rename, replace = os.fsync, Path.rename, os.replace

    def synced(fd: int) -> None:
        events.append(("sync", os.readlink(f"/proc/self/fd/{fd}")))
        fsync(fd)

    def renamed(self: Path, target: Path) -> Path:
        events.append(("rename", str(self)))
        return rename(self, target)

    def replaced(src: str, dst: str) -> None:
        events.append(("replace", str(src)))
        replace(src, dst)

    monkeypatch.setattr(os, "fsync", synced)
    monkeypatch.setattr(Path, "rename", renamed)
    monkeypatch.setattr(os, "replace", replaced)
    lexical_store.write(ws.searcher.lexical.compacted(), tmp_path / "saved")
    folder = str((tmp_path / "saved").resolve())
    staging = next(p for k, p in events if k == "rename" and "/.saving-" in p)
    at = events.index(("rename", staging))
    synced_first = {p for k, p in events[:at] if k == "sync"}
    assert {f"{staging}/{n}" for n in ("terms.npz", "vocab.json", "rows.npy")} <= synced_first
    assert staging in synced_first
    state = next(p for k, p in events if k == "replace")
    assert ("sync", state) in events[: events.index(("replace", state))]
    assert events[events.index(("replace", state)) + 1] == ("sync", folder)


def test_a_base_moved_while_read_is_read_again_not_rebuilt(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that read state.json just before the writer saved a new base and removed the
    one it named reads the new base (state.json names it), without a build from every unit."""
    copy = tmp_path / "copy"
    shutil.copytree(ws.path / "lexical", copy)
    (old,) = (p for p in copy.iterdir() if p.is_dir())
    shutil.copytree(old, copy / "base-new")
    load = lexical_store.TermMatrix.load

    def saved_meanwhile(path: Path) -> object:
        if path == old:  # the writer's save lands between the reader's two reads
            state = (copy / "state.json").read_text()
            (copy / "state.json").write_text(state.replace(old.name, "base-new"))
            shutil.rmtree(old)
        return load(path)

    def build(*args: object, **kwargs: object) -> LexicalIndex:
        raise AssertionError("built from every stored unit")

    monkeypatch.setattr(lexical_store.TermMatrix, "load", saved_meanwhile)
    monkeypatch.setattr(LexicalIndex, "build", build)
    again = lexical_store.open_index(ws.store, copy, 1.5, 0.75, save=False)
    assert again.units == ws.searcher.lexical.units
