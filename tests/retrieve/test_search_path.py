"""How many of trilha's files one warm search passes through (issue 33: one search pipeline).

Every call of a warm default ``Workspace.search`` (over the bundled samples and their graph, so
the KG boost is on) is counted by the module it runs in, on the calling thread and on every
thread (the side threads and the graph's included): the
search's own stages live in :mod:`trilha.retrieve.pipeline`, so the files counted are that
module, the plan, the cache, the workspace, and what the stages call (indices, encoder, graph,
access rules, types). On the calling thread, no call goes back into a file that is on the stack
below its caller (the pipeline calling back into the workspace that called it)."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.conftest import SAMPLES
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import load_path
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

PACKAGE = Path(__file__).resolve().parents[2] / "plugin" / "trilha"
#: Files a warm boosted search passes through on every thread (36 before the search was one
#: pipeline module, 29 after, 27 with its tracing in the pipeline and the KG booster and its gate
#: in one module, 21 with no needless work at query time: the fusion resolved once per language
#: and request, no Weights rebuilt, the query's entities found only when the graph is read, one
#: TTL cache; the index, encoder (three for these tests' ONNX one), graph and access modules the
#: sides call are most of them; the lexical side's top k by MaxScore is in index/bm25.py, already
#: on the path).
MOST_FILES = 21
#: Files it passes through on the calling thread (the sides run on their own): 22 before, 12
#: after, 13 since the lexical index grows by segments: its row lookups (the live row of a unit
#: id, the unit of a row), which the hits are filled from, are its own classes where they were a
#: dict and a tuple (the file was already on the path, on the lexical side's thread); 14 since
#: the BM25 scores the hits are filled with are computed for those rows (index/bm25.py), where
#: they were read from an array of every row's.
MOST_FILES_CALLING = 14


@pytest.fixture(scope="module")
def samples_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """The samples in a workspace of its own: its side threads start under the profiler."""
    path = tmp_path_factory.mktemp("path") / "ws"
    with Workspace.open(path, TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(load_path(SAMPLES))
        yield ws


def test_a_warm_boosted_search_passes_through_few_files(samples_ws: Workspace) -> None:
    assert samples_ws.graph is not None
    calls: Counter[str] = Counter()
    calling: Counter[str] = Counter()  # on the thread that searches
    back_in: list[str] = []  # calls into a file already on the calling thread's stack
    counting = False
    main = threading.get_ident()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if counting and event == "call":
            name = _ours(frame)
            if name is not None:
                calls[name] += 1
                if threading.get_ident() == main:
                    calling[name] += 1
                    if name in _below_caller(frame):
                        back_in.append(name)

    sys.setprofile(profile)
    threading.setprofile(profile)  # before the warm-up: the side threads start with it
    try:
        samples_ws.search("prazo de recurso", top_k=5)  # warm
        counting = True
        result = samples_ws.search("prazo de recurso para apelação", top_k=5)
        counting = False
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert result.hits and result.trace.stage("kg") is not None
    files = sorted(calls)
    assert len(files) <= MOST_FILES, "\n".join(f"{f} {calls[f]}" for f in files)
    assert len(calling) <= MOST_FILES_CALLING, "\n".join(
        f"{f} {calling[f]}" for f in sorted(calling)
    )
    assert "retrieve/pipeline.py" in calling
    assert back_in == []


def _ours(frame: FrameType) -> str | None:
    """The package file ``frame`` runs in, relative to the package; None outside it."""
    name = Path(frame.f_code.co_filename)
    return str(name.relative_to(PACKAGE)) if name.is_relative_to(PACKAGE) else None


def _below_caller(frame: FrameType) -> set[str]:
    """The package files on the stack under ``frame``'s nearest package caller (that caller's
    own file excluded: a call within a file, or back into its caller's file, is no return)."""
    files: list[str] = []
    back = frame.f_back
    while back is not None:
        name = _ours(back)
        if name is not None and (not files or files[-1] != name):
            files.append(name)
        back = back.f_back
    return set(files[1:]) - set(files[:1])
