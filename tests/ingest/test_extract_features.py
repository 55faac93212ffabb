"""Decision fields extracted at ingest by a Groq model (a local server speaking its protocol)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.extract_features import valid_fields
from trilha.ingest.loaders import SourceDocument
from trilha.retrieve.features import feature_search
from trilha.settings import TrilhaSettings
from trilha.testing.groq_server import GroqTestServer, Reply
from trilha.workspace import Workspace

FIELDS = {
    "categorias": ["consumidor", "bancário"],
    "resultado": "provido",
    "unanimidade": True,
    "tipo_recurso": "REsp",
    "argumento_vencedor": "cobrança indevida gera restituição em dobro",
    "juiz_inventado": "x",
    "ministro_relator": 7,
}


def _decision(doc_id: str, text: str, **meta: Any) -> SourceDocument:
    return SourceDocument(doc_id=doc_id, text=text, meta={"lang": "pt", **meta})


def test_fields_are_extracted_once_and_front_matter_wins(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with GroqTestServer(lambda request: Reply(content=json.dumps(FIELDS))) as server:
        settings = TrilhaSettings(feature_extraction="llm", groq_api_key="test",
                                  groq_base_url=server.base_url)  # fmt: skip
        docs = [_decision("d1", "Recurso especial sobre tarifa bancária cobrada em dobro."),
                _decision("d2", "Outro recurso sobre tarifa.", resultado="desprovido")]  # fmt: skip
        with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
            first = ws.ingest(docs)
            again = ws.ingest(docs)
            found = feature_search(ws, {"categorias": ["bancário"], "unanimidade": True})
            provido = feature_search(ws, {"resultado": "provido"})
        calls = len(server.requests)
        prompt = server.requests[0]["messages"][0]["content"]
    assert first.docs_added == 2 and not first.errors
    assert again.docs_unchanged == 2 and calls == 2  # unchanged documents are not sent again
    assert {d.doc_id for d in found.documents} == {"d1", "d2"}
    assert {d.doc_id for d in provido.documents} == {"d1"}  # d2's own resultado kept
    assert "juiz_inventado" not in found.documents[0].features
    assert "argumento_vencedor" in prompt and "unanimidade" in prompt


def test_a_failing_model_leaves_the_document_and_says_so(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with GroqTestServer(lambda request: Reply(status=500, content="boom")) as server:
        settings = TrilhaSettings(feature_extraction="llm", groq_api_key="test",
                                  groq_base_url=server.base_url)  # fmt: skip
        with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
            report = ws.ingest([_decision("d1", "Recurso especial.")])
            assert len(ws) == 1
    assert report.docs_added == 1 and len(report.errors) == 1
    assert "document 'd1': feature extraction failed" in report.errors[0]


def test_only_known_fields_of_the_right_type_are_kept() -> None:
    assert valid_fields(FIELDS) == {
        "categorias": ["consumidor", "bancário"],
        "resultado": "provido",
        "unanimidade": True,
        "tipo_recurso": "REsp",
        "argumento_vencedor": "cobrança indevida gera restituição em dobro",
        "ministro_relator": "7",
    }
    assert valid_fields({"unanimidade": "sim", "categorias": "civil", "tese": " "}) == {
        "categorias": ["civil"]
    }
