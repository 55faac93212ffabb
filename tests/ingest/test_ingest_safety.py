"""Ingest never loses or orphans data: refusals, atomic replacement, one identity, repair."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import WorkspaceError
from trilha.index.dense import DenseIndex
from trilha.ingest import pipeline
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import TextUnit
from trilha.workspace import Workspace

NO_GRAPH = TrilhaSettings(graph_backend="none")


def _write(folder: Path, name: str, body: str, front: str = "") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((f"---\n{front}\n---\n" if front else "") + body, encoding="utf-8")
    return path


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    for i, topic in enumerate(["vpn access", "expense approval", "incident report", "vacation"]):
        _write(folder, f"d{i}.md", f"# Policy {i}\n\nThe {topic} policy, version one.\n" * 3)
    return folder


@pytest.fixture()
def ws(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[Workspace]:
    workspace = Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True)
    yield workspace
    workspace.close()


def _texts(ws: Workspace, doc_id: str) -> str:
    return " ".join(u.text for u in ws.store.units_of([doc_id]))


def test_a_bad_file_is_refused_and_the_rest_of_the_folder_ingested(
    ws: Workspace, corpus: Path
) -> None:
    ws.ingest_path(corpus)
    _write(corpus, "d0.md", "The vpn access policy, version two.\n")
    _write(corpus, "d1.md", "Changed, but dated badly.\n", front="date: yesterday")
    report = ws.ingest_path(corpus)
    assert (report.docs_updated, report.docs_unchanged, len(report.refused)) == (1, 2, 1)
    refusal = report.refused[0]
    assert refusal.file == str((corpus / "d1.md").resolve())
    assert refusal.reason == "date 'yesterday' is not a date; use YYYY-MM-DD"
    assert "version two" in _texts(ws, "d0") and "expense approval" in _texts(ws, "d1")
    assert ws.check().consistent
    assert ws.search("expense approval", top_k=1).hits[0].unit.doc_id == "d1"


def test_a_file_with_no_text_is_refused_and_a_held_version_stays(
    ws: Workspace, corpus: Path
) -> None:
    ws.ingest_path(corpus)
    _write(corpus, "d0.md", "")  # emptied
    _write(corpus, "blank.txt", "  \n\n")
    _write(corpus, "front-only.md", "", front="title: nothing else")
    report = ws.ingest_path(corpus)
    assert (report.docs_added, report.docs_updated, report.docs_unchanged) == (0, 0, 3)
    refused = {Path(r.file).name: r.reason for r in report.refused}
    assert set(refused) == {"d0.md", "blank.txt", "front-only.md"}
    fresh = "no text to index; write some or remove the file"
    assert refused["blank.txt"] == refused["front-only.md"] == fresh
    assert refused["d0.md"] == (
        "no text to index; the version indexed before stays: write some text, "
        f"or drop it with `trilha ingest -w {ws.path} --delete=d0`"
    )
    assert "vpn access" in _texts(ws, "d0") and ws.check().consistent


class FailingDense:
    """The workspace's real dense index, failing the ``n``-th call of one method (a crash)."""

    def __init__(self, inner: DenseIndex, method: str, n: int) -> None:
        self.inner, self.method, self.left = inner, method, n

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.inner, name)
        if name != self.method:
            return real

        def call(*args: Any) -> Any:
            self.left -= 1
            if self.left == 0:
                raise OSError("disk full (injected)")
            return real(*args)

        return call


@pytest.mark.parametrize(("method", "n"), [("upsert", 1), ("upsert", 2), ("delete_units", 1)])
def test_a_failure_mid_batch_leaves_each_document_old_or_new(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, corpus: Path, method: str, n: int
) -> None:
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        ws.ingest_path(corpus)
        before = {d: _texts(ws, d) for d in ws.store.doc_ids()}
    # d0 grows (new units), d2 shrinks (stale units to remove): both kinds of change in a batch
    _write(corpus, "d0.md", "# Policy 0\n\nvpn access, version two.\n\n" + "More text. " * 400)
    _write(corpus, "d2.md", "incident report, version two.")
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        ws.dense = FailingDense(ws.dense, method, n)  # type: ignore[assignment]
        pipeline_batch = 2  # several encode batches, so the failure can land between them
        with pytest.raises(OSError, match="injected"):
            from trilha.ingest.pipeline import IngestPipeline

            IngestPipeline(ws.store, ws.dense, embedder, encode_batch=pipeline_batch).run(
                ws.load(corpus), progress=False
            )
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        assert ws.check().consistent
        for doc_id, old in before.items():
            now = _texts(ws, doc_id)
            assert now == old or "version two" in now
            stored = ws.dense.vectors(ws.store.unit_ids_of(doc_id))
            assert set(stored) == set(ws.store.unit_ids_of(doc_id))
            units = ws.store.units_of([doc_id])
            fresh = embedder.encode_documents([_index_text(u) for u in units])
            for u, v in zip(units, fresh, strict=True):
                assert float(np.dot(stored[u.unit_id], v)) > 0.999


def _index_text(unit: TextUnit) -> str:
    from trilha.ingest.chunking import index_text

    return index_text(unit)


def test_two_files_with_one_doc_id_are_refused(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "dup"
    _write(folder, "a.md", "first body", front="doc_id: same")
    _write(folder, "b.md", "second body", front="doc_id: same")
    report = ws.ingest_path(folder)
    assert report.docs_added == 1 and len(report.refused) == 1
    assert report.refused[0].file == str((folder / "b.md").resolve())
    assert "doc_id 'same' is already used by" in report.refused[0].reason
    assert "a.md" in report.refused[0].reason
    # a later ingest of another file claiming the id is refused too, while a.md exists
    other = tmp_path / "other"
    _write(other, "c.md", "third body", front="doc_id: same")
    later = ws.ingest_path(other)
    assert later.docs_added + later.docs_updated == 0 and len(later.refused) == 1
    assert "already belongs to" in later.refused[0].reason
    assert f"(`trilha ingest -w {ws.path} --delete=same`)" in later.refused[0].reason
    assert _texts(ws, "same") == "first body" and ws.check().consistent


@pytest.mark.parametrize("moved_to", ["0-first.md", "z-last.md"])  # read before / after b.md
def test_a_moved_file_keeps_its_contested_doc_id(
    ws: Workspace, tmp_path: Path, moved_to: str
) -> None:
    folder = tmp_path / "dup"
    _write(folder, "a.md", "first body", front="doc_id: same")
    _write(folder, "b.md", "second body", front="doc_id: same")
    ws.ingest_path(folder)  # a.md holds 'same', b.md is refused
    (folder / "a.md").rename(folder / moved_to)
    report = ws.ingest_path(folder)  # its title, from the file name, changes: an update
    assert (report.docs_added, report.docs_updated) == (0, 1)
    assert [Path(r.file).name for r in report.refused] == ["b.md"]
    assert moved_to in report.refused[0].reason
    assert _texts(ws, "same") == "first body" and ws.check().consistent
    (folder / moved_to).unlink()  # now the other claimant may take the id
    report = ws.ingest_path(folder)
    assert report.docs_updated == 1 and not report.refused
    assert _texts(ws, "same") == "second body" and ws.check().consistent


def test_a_moved_file_is_recorded_under_its_new_name(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "dup"
    _write(folder, "a.md", "first body", front="doc_id: same")
    ws.ingest_path(folder)
    (folder / "a.md").rename(folder / "moved.md")
    assert ws.ingest_path(folder).docs_updated == 1  # its source path is part of it
    _write(folder, "b.md", "second body", front="doc_id: same")
    report = ws.ingest_path(folder)  # moved.md exists, so it still owns the id
    assert [Path(r.file).name for r in report.refused] == ["b.md"]
    assert (
        "already belongs to" in report.refused[0].reason and "moved.md" in report.refused[0].reason
    )
    assert _texts(ws, "same") == "first body"


def _vector(ws: Workspace) -> npt.NDArray[np.float32]:
    return ws.embedder.encode_documents(["an orphan"])


def test_repair_on_open_compares_id_sets_not_counts(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, corpus: Path
) -> None:
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        ws.ingest_path(corpus)
        real = sorted(ws.store.unit_ids())
        # one orphan in, one real unit out: the counts stay equal, the sets do not
        ghost = TextUnit(unit_id="ghost#0", doc_id="ghost", text="an orphan")
        ws.dense.upsert([ghost], _vector(ws))
        ws.dense.delete_units([real[0]])
        assert ws.dense.count() == len(real)
        found = ws.check()
        assert (found.dense.orphans, found.dense.missing) == (["ghost#0"], [real[0]])
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        assert ws.dense.unit_ids() == set(real) and ws.check().consistent


def test_orphan_vectors_never_cost_a_result(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, corpus: Path
) -> None:
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        ws.ingest_path(corpus)
        total = len(ws)
        ghosts = [
            TextUnit(unit_id=f"ghost#{i}", doc_id="ghost", text="vpn access policy")
            for i in range(total)
        ]
        vectors = embedder.encode_documents([g.text for g in ghosts])
        ws.dense.upsert(ghosts, vectors)
    with Workspace.open(
        tmp_path / "ws", NO_GRAPH, embedder=embedder, repair=False, create=True
    ) as ws:
        result = ws.search("vpn access policy", top_k=total)
        assert len(result.hits) == total
        assert any("not in this search's snapshot" in w for w in result.trace.warnings)


@pytest.mark.parametrize("spelling", ["corpus", "./corpus/", "ABS", "."])
def test_ingest_is_idempotent_whatever_the_path_spelling(
    ws: Workspace, corpus: Path, spelling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(corpus.parent)
    ws.ingest_path("corpus")
    if spelling == ".":
        monkeypatch.chdir(corpus)
    target = str(corpus) if spelling == "ABS" else spelling
    report = ws.ingest_path(target)
    assert (report.docs_unchanged, report.docs_added, report.docs_updated) == (4, 0, 0)


def test_a_file_stays_one_document_whichever_folder_is_ingested(
    ws: Workspace, corpus: Path
) -> None:
    _write(corpus / "sub", "deep.md", "# Deep\n\nA nested policy on remote work.\n")
    _write(corpus / "sub", "named.md", "Named by its front matter.", front="doc_id: named")
    ws.ingest_path(corpus)
    assert "sub/deep" in ws.store.doc_ids()
    for target in (corpus / "sub", corpus / "sub" / "deep.md"):
        report = ws.ingest_path(target)
        assert (report.docs_added, report.docs_updated, report.refused) == (0, 0, []), target
    assert len(ws.store.doc_ids()) == 6
    _write(corpus / "sub", "deep.md", "# Deep\n\nThe nested policy, second version.\n")
    report = ws.ingest_path(corpus / "sub")
    assert (report.docs_added, report.docs_updated) == (0, 1)
    assert "second version" in _texts(ws, "sub/deep") and len(ws.store.doc_ids()) == 6


def test_ingest_dot_never_reads_the_workspace_itself(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "proj", "notes.md", "project notes")
    monkeypatch.chdir(tmp_path / "proj")
    with Workspace.open(Path(".trilha"), TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest_path(".")  # the graph writes a retrieval log (.jsonl) inside .trilha
        ws.search("notes", top_k=1)
        assert ws.store.doc_ids() == ["notes"]
    with Workspace.open(tmp_path / "proj" / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        (tmp_path / "proj" / "ws" / "stray.jsonl").write_text('{"doc_id": "x", "text": "y"}\n')
        report = ws.ingest_path(tmp_path / "proj")
        assert ws.store.doc_ids() == ["notes"] and not report.refused


def test_a_busy_workspace_is_refused_in_one_line(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    import subprocess
    import sys

    Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True).close()
    holder = subprocess.Popen(  # another process holds the workspace's lock
        [sys.executable, "-c", _HOLDER, str(tmp_path / "ws")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(WorkspaceError) as info:
            Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder)
        message = str(info.value)
        assert f"workspace {tmp_path / 'ws'} is in use by another trilha process" in message
        assert f"(pid {holder.pid})" in message and "\n" not in message
    finally:
        holder.communicate("")
    Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder).close()


_HOLDER = """
import sys
from pathlib import Path
from trilha.workspace.lock import WorkspaceLock
lock = WorkspaceLock.acquire(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.read()
"""


def test_opening_a_missing_workspace_read_only_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="no trilha workspace at"):
        Workspace.open(tmp_path / "typo", NO_GRAPH, create=False)
    assert not (tmp_path / "typo").exists()


_CHILD = """
import os, signal, sys
from pathlib import Path
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace
from trilha.ingest.pipeline import IngestPipeline
ws = Workspace.open(Path(sys.argv[1]), TrilhaSettings(graph_backend="none"), create=True)
target, countdown = sys.argv[3], [int(sys.argv[4])]
owner = ws.store if target == "replace_doc" else ws.dense if target != "encode" else ws.embedder
name = "encode_documents" if target == "encode" else target
real = getattr(owner, name)
def dying(*args, **kwargs):
    countdown[0] -= 1
    if countdown[0] == 0:
        os.kill(os.getpid(), signal.SIGKILL)  # a real kill -9, at a chosen point
    return real(*args, **kwargs)
setattr(owner, name, dying)
IngestPipeline(ws.store, ws.dense, ws.embedder, batch_units=4, encode_batch=2).run(
    ws.load(sys.argv[2]), progress=False
)
"""


#: Where the child dies (before the n-th call). ``make test`` kills it between two documents'
#: replacements, the batch's new vectors written and its stale ones not yet deleted;
#: ``make check`` kills it at every step of a batch.
KILL_POINTS = [
    pytest.param("encode", 5, marks=pytest.mark.sweep),
    pytest.param("upsert", 4, marks=pytest.mark.sweep),
    ("replace_doc", 3),
    pytest.param("replace_doc", 4, marks=pytest.mark.sweep),
    pytest.param("delete_units", 2, marks=pytest.mark.sweep),
]


@pytest.mark.parametrize(("target", "nth"), KILL_POINTS)
def test_kill_9_during_an_ingest_leaves_every_document_old_or_new(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    corpus: Path,
    target: str,
    nth: int,
) -> None:
    import subprocess
    import sys

    for i in range(4, 12):
        _write(corpus, f"d{i}.md", f"# Policy {i}\n\nRule {i}, version one.\n" + "Old. " * 300)
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        ws.ingest_path(corpus)
        before = {d: _texts(ws, d) for d in ws.store.doc_ids()}
    for i in range(12):  # some documents grow, d4… shrink: new units and stale units
        _write(corpus, f"d{i}.md", f"# Policy {i}\n\nRule {i}, version two.\n" + "New. " * 150)
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "ws"), str(corpus), target, str(nth)],
        env={**os.environ, "TRILHA_GRAPH_BACKEND": "none"},
        check=False,
    )
    assert child.returncode == -9
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        assert ws.check().consistent
        changed = 0
        for doc_id, old in before.items():
            now = _texts(ws, doc_id)
            assert now == old or "version two" in now
            changed += now != old
            assert ws.dense.unit_ids() == ws.store.unit_ids()
        assert changed < len(before)  # it really stopped half-way
        assert changed > 0 or target == "encode"


def test_stored_tokens_follow_the_tokenizer_version(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    import sqlite3

    from trilha.index.tokenize import TOKENIZER_VERSION
    from trilha.ingest.loaders import SourceDocument

    doc = SourceDocument(doc_id="zh", text="图数据库可以存储实体和关系。")
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        ws.ingest([doc, SourceDocument(doc_id="en", text="Relational tables and rows.")])
    db = sqlite3.connect(tmp_path / "ws" / "units.sqlite")  # as an older trilha stored them
    db.execute("UPDATE units SET tokens='图数据库可以存储实体和关系' WHERE doc_id='zh'")
    db.execute("UPDATE meta SET value='1' WHERE key='tokenizer'")
    db.commit()
    db.close()
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        hits = ws.search("图数据库", top_k=1, sides=("bm25",)).hits
        assert [h.unit.doc_id for h in hits] == ["zh"]
        assert ws.store.get_meta("tokenizer") == TOKENIZER_VERSION


def test_links_to_nothing_pipes_and_lone_surrogates_are_refused_one_line_each(
    ws: Workspace, tmp_path: Path
) -> None:
    folder = tmp_path / "odd"
    _write(folder, "a.txt", "expense approval needs a receipt")
    (folder / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    os.mkfifo(folder / "pipe.txt")  # reading it would wait forever
    (folder / "s.jsonl").write_text(
        '{"doc_id": "g1", "text": "good record"}\n{"doc_id": "x", "text": "bad \\ud800"}\n'
        '{"doc_id": "g2", "text": "a pair \\ud83d\\ude00 is fine"}\n',
        encoding="utf-8",
    )
    _write(folder, "f.md", "body", front='title: "lone \\ud800"')
    report = ws.ingest_path(folder)
    assert report.docs_added == 3  # a.txt, g1 and g2
    refused = {Path(r.file.rsplit(":", 1)[0]).name: r.reason for r in report.refused}
    assert refused["dangling.txt"].startswith("a link to nothing; only regular files")
    assert refused["pipe.txt"].startswith("not a file; only regular files")
    assert refused["s.jsonl"].startswith("an unpaired surrogate escape")
    assert refused["f.md"].startswith("front matter holds an unpaired surrogate escape")
    assert all("\n" not in r.reason for r in report.refused) and ws.check().consistent


def test_a_documents_lang_is_checked_and_written_as_the_detector_writes_it(
    ws: Workspace, tmp_path: Path
) -> None:
    folder = tmp_path / "langs"
    _write(folder, "upper.md", "Contrato de prestação de serviços.", front="lang: PT")
    _write(folder, "region.md", "Contrato de locação.", front="lang: pt_br")
    _write(folder, "bad.md", "Qapla'.", front="lang: klingon")
    report = ws.ingest_path(folder)
    assert report.docs_added == 2 and [Path(r.file).name for r in report.refused] == ["bad.md"]
    assert report.refused[0].reason.startswith("language 'klingon' is not a language code")
    langs = {u.doc_id: u.lang for u in ws.store.units_of(["upper", "region"])}
    assert langs == {"upper": "pt", "region": "pt-BR"}
    found = {
        code: sorted(h.unit.doc_id for h in ws.search("contrato", filters={"lang": code}).hits)
        for code in ("pt", "pt-BR", "PT")
    }
    assert found == {"pt": ["region", "upper"], "pt-BR": ["region"], "PT": ["region", "upper"]}


def test_a_long_ingest_is_searched_as_it_goes_and_reads_a_bounded_part_each_time(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every REFRESH_UNITS units written, the lexical snapshot catches up: the documents already
    written are found while later ones are still coming, and each catch-up reads only the
    units written since the one before (what a million-unit ingest holds at once)."""
    monkeypatch.setattr(pipeline, "BATCH_UNITS", 2)
    monkeypatch.setattr(pipeline, "REFRESH_UNITS", 4)
    read: list[int] = []
    changes = ws.store.changes

    def counted(row: int, seq: int, kept: bool = False) -> Any:
        found = changes(row, seq, kept)
        read.append(len(found.added))
        return found

    monkeypatch.setattr(ws.store, "changes", counted)
    found_midway: list[str] = []

    def documents() -> Iterator[SourceDocument]:
        for i in range(12):
            if i == 10:
                hits = ws.search("zirconium0 cladding", top_k=3, sides=("bm25",)).hits
                found_midway.extend(h.unit.doc_id for h in hits)
            text = f"Zirconium{i} cladding resists corrosion in reactor number {i}."
            yield SourceDocument(doc_id=f"d{i}", text=text, meta={"lang": "en"})

    ws.ingest(documents())
    assert found_midway[:1] == ["d0"] and len(ws) == 12
    assert len(read) >= 3 and max(read) <= 4  # bounded: never the whole ingest at once
    assert ws.search("zirconium11 cladding", top_k=1, sides=("bm25",)).hits[0].unit.doc_id == "d11"


@pytest.mark.parametrize("size", [0, -3])
def test_a_batch_of_no_units_is_refused(ws: Workspace, size: int) -> None:
    with pytest.raises(ValueError, match="batch_units must be at least 1"):
        pipeline.IngestPipeline(ws.store, ws.dense, ws.embedder, batch_units=size)
