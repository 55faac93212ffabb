"""Searches through a real workspace return only what the principal may see, and top_k of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.access.test_policy import _meta, access_of, principals
from trilha.access import Principal, visible
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import Side, TextUnit
from trilha.workspace import Workspace

WORDS = ["vpn", "budget", "remote", "incident", "contract", "laptop", "audit", "travel"]
N = 120


@pytest.fixture(scope="module")
def access_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    rng = np.random.default_rng(5)
    docs = [
        SourceDocument(
            doc_id=f"d{i}",
            text=" ".join(rng.choice(WORDS, size=6)) + f" note {i}",
            source_type="text",
            meta=_meta(rng),
        )
        for i in range(N)
    ]
    settings_ = TrilhaSettings(graph_backend="none")
    ws = Workspace.open(
        tmp_path_factory.mktemp("acc") / "ws", settings_, embedder=embedder, create=True
    )
    assert not ws.ingest(docs).refused
    yield ws
    ws.close()


SIDES: list[tuple[Side, ...]] = [("bm25",), ("semantic",), ("bm25", "semantic")]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    principal=principals,
    word=st.sampled_from(WORDS),
    lang=st.one_of(st.none(), st.sampled_from(["en", "pt"])),
    top_k=st.integers(1, 30),
)
def test_every_hit_is_visible_and_top_k_is_kept(
    access_ws: Workspace, principal: Principal, word: str, lang: str | None, top_k: int
) -> None:
    """60 cases x 3 sides x up to 30 hits checked against the pure rule, plus the counts."""
    units = access_ws.store.get([f"d{i}#0" for i in range(N)]).values()
    allowed = {
        u.unit_id
        for u in units
        if visible(access_of(u), principal) and (lang is None or u.lang == lang)
    }
    filters = {"lang": lang} if lang else None
    for sides in SIDES:
        hits = access_ws.search(
            word, top_k=top_k, filters=filters, sides=sides, principal=principal
        ).hits
        got = [h.unit.unit_id for h in hits]
        assert set(got) <= allowed, (sides, set(got) - allowed)
        if "semantic" in sides:  # the dense side ranks every allowed unit: none lost to the cut
            assert len(got) == min(top_k, len(allowed))


def test_anonymous_by_default(access_ws: Workspace) -> None:
    public = [
        u
        for u in access_ws.store.get([f"d{i}#0" for i in range(N)]).values()
        if visible(access_of(u), Principal.anonymous())
    ]
    hits = access_ws.search("vpn", top_k=N).hits
    assert {h.unit.unit_id for h in hits} == {u.unit_id for u in public}
    assert access_ws.search("vpn").trace.principal.startswith("anonymous")  # type: ignore[union-attr]


def test_a_public_workspace_skips_the_dense_filter_but_never_leaks_strays(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    """Everyone sees every stored unit, so the dense side runs unfiltered; a vector the store
    lacks (here a private one written straight into the dense index) is still never returned."""
    ws = Workspace.open(
        tmp_path / "ws", TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    )
    with ws:
        ws.ingest([SourceDocument(doc_id=f"p{i}", text=f"vpn guide {i}", source_type="text")
                   for i in range(5)])  # fmt: skip
        secret = TextUnit(unit_id="s#0", doc_id="s", text="vpn secret", visibility="private",
                          owner_id="boss")  # fmt: skip
        ws.dense.upsert([secret], embedder.encode_documents(["vpn secret"]))
        result = ws.search("vpn secret", top_k=10, sides=("semantic",))
        assert "s#0" not in {h.unit.unit_id for h in result.hits}
        assert len(result.hits) == 5 and "snapshot" in " ".join(result.trace.warnings)
