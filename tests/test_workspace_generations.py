"""Searches that run while ingests refresh the index each see one whole generation."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import SearchResult
from trilha.workspace import Workspace

ROUNDS = 6
DOCS = 4


def _docs(round_no: int) -> list[SourceDocument]:
    """Every document rewritten for this round; odd rounds have two units per document (so
    unit ids come and go between generations, not only their texts)."""
    out = []
    for k in range(DOCS):
        paragraphs = [
            f"alpha document {k} part {j} of round {round_no} covers vpn access, laptops "
            "and the support desk hours for staff."
            for j in range(1 + round_no % 2)
        ]
        out.append(SourceDocument(doc_id=f"d{k}", text="\n\n".join(paragraphs)))
    return out


@pytest.mark.slow
def test_searches_during_ingest_see_one_generation(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    ws = Workspace.open(
        tmp_path / "ws", TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    )
    generations: dict[int, dict[str, str]] = {}  # round -> {unit_id: text} of its snapshot
    started, done = [0], [0]
    ws.ingest(_docs(0), max_words=20)
    generations[0] = {u.unit_id: u.text for u in ws.all_units()}
    seen: list[tuple[int, int, SearchResult]] = []  # (done before, started after, result)
    errors: list[BaseException] = []
    finished = threading.Event()

    def ingest() -> None:
        try:
            for r in range(1, ROUNDS + 1):
                started[0] = r
                ws.ingest(_docs(r), max_words=20)
                generations[r] = {u.unit_id: u.text for u in ws.all_units()}
                done[0] = r
        finally:
            finished.set()

    def search(use_async: bool) -> None:
        while not finished.is_set():
            before = done[0]
            if use_async:
                result = asyncio.run(ws.asearch("alpha vpn laptops", top_k=20))
            else:
                result = ws.search("alpha vpn laptops", top_k=20)
            seen.append((before, started[0], result))

    def guarded(job: Callable[[], None]) -> None:
        try:
            job()
        except BaseException as e:  # an exception in any thread fails the test
            errors.append(e)
            finished.set()

    jobs = [ingest, *(partial(search, use_async) for use_async in (False, False, True))]
    threads = [threading.Thread(target=guarded, args=(job,)) for job in jobs]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    finally:
        finished.set()
        ws.close()
    assert not errors, errors
    assert len(seen) > ROUNDS  # the searches did overlap the ingests
    for before, after, result in seen:
        rounds = {int(re.findall(r"round (\d+)", h.unit.text)[0]) for h in result.hits}
        assert len(rounds) == 1, rounds  # one generation per search
        (r,) = rounds
        assert before <= r <= after  # the one current while the search ran
        hits = {h.unit.unit_id: h.unit.text for h in result.hits}
        assert hits == generations[r]  # all of that generation's units, exactly its texts
