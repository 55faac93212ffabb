"""LlamaIndex's ``Settings.llm`` (or ``llm=`` given to TrilhaIndex) is the LLM of query expansion
and Pre-query too, trilha's own settings (a Groq key, an offline backend) winning when given;
an index built with a LlamaIndex embedding says how to open it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import Document
from pydantic import Field

from trilha import TrilhaIndex
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import ConfigurationError
from trilha.orchestrate import Orchestrator
from trilha.orchestrate.prequery import prequery
from trilha.settings import TrilhaSettings

NO_GRAPH = TrilhaSettings(graph_backend="none")
DOCS = [
    Document(text="O prazo recursal é de quinze dias úteis.", id_="prazo"),
    Document(text="As férias são marcadas com trinta dias de antecedência.", id_="ferias"),
]


class StandIn(CustomLLM):
    """Answers trilha's expansion prompt with one variant (fenced, as chat models write it) and
    its Pre-query prompt with an intent; records which it was asked."""

    asked: list[str] = Field(default_factory=list)
    delay_s: float = 0.0

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="stand-in")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        time.sleep(self.delay_s)
        if "rewrite search queries" in prompt:
            self.asked.append("expansion")
            return CompletionResponse(text='```json\n{"variants": ["prazo recursal"]}\n```')
        self.asked.append("prequery")
        return CompletionResponse(text='{"retrieval_intent": "procedural", "confidence": 0.9}')

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


@pytest.fixture()
def settings_llm() -> Iterator[StandIn]:
    """A stand-in set as ``Settings.llm`` for the test only."""
    llm = StandIn(asked=[])
    Settings.llm = llm
    yield llm
    Settings._llm = None


def _index(path: Path, embedder: SentenceTransformerEmbedder, **kwargs: Any) -> TrilhaIndex:
    kwargs.setdefault("settings", NO_GRAPH)
    return TrilhaIndex.from_documents(DOCS, path=path, embed_model=embedder, **kwargs)


def test_settings_llm_expands_queries(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, settings_llm: StandIn
) -> None:
    with _index(tmp_path / "ix", embedder) as index:
        result = index.as_retriever(expand=True).search("prazo de recurso")
    assert result.trace.expansion_queries == ["prazo recursal"]
    assert settings_llm.asked == ["expansion"]
    assert result.trace.stage("expand") is not None


def test_trilha_settings_win_over_settings_llm(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, settings_llm: StandIn
) -> None:
    groq = NO_GRAPH.model_copy(update={"groq_api_key": "k", "groq_base_url": "http://127.0.0.1:9"})
    with _index(tmp_path / "ix", embedder, settings=groq) as index:
        result = index.as_retriever(expand=True).search("prazo de recurso")
    assert any("llama-3.1-8b-instant" in w for w in result.trace.warnings)  # Groq was asked
    offline = NO_GRAPH.model_copy(update={"expansion_backend": "offline"})
    with _index(tmp_path / "ix2", embedder, settings=offline) as index:
        index.as_retriever(expand=True).search("prazo de recurso")
    assert settings_llm.asked == []


def test_an_llm_given_to_the_index_expands_and_classifies(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    llm = StandIn(asked=[])
    with _index(tmp_path / "ix", embedder, llm=llm) as index:
        assert index.as_retriever(expand=True).search("prazo").trace.expansion_queries == [
            "prazo recursal"
        ]
        orch = Orchestrator(index.workspace)
        outcome = prequery("como peço férias?", now=datetime.now(UTC), classifier=orch.classifier)
        orch.close()
    assert outcome.result.classifier == "llm"
    assert outcome.result.retrieval_intent == "procedural"
    assert llm.asked == ["expansion", "prequery"]


def test_a_slow_llm_is_past_the_expansion_deadline(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    quick = NO_GRAPH.model_copy(update={"expansion_timeout_s": 0.1})
    llm = StandIn(asked=[], delay_s=0.5)
    with _index(tmp_path / "ix", embedder, settings=quick, llm=llm) as index:
        result = index.as_retriever(expand=True).search("prazo")
    assert result.trace.expansion_queries == []
    assert any("stand-in gave no answer within 0.1 s" in w for w in result.trace.warnings)


def test_an_index_built_with_a_llamaindex_embedding_says_to_pass_it(tmp_path: Path) -> None:
    TrilhaIndex.from_documents(
        DOCS, path=tmp_path / "ix", settings=NO_GRAPH, embed_model=MockEmbedding(embed_dim=8)
    ).close()
    with pytest.raises(ConfigurationError) as info:
        TrilhaIndex.open(tmp_path / "ix", settings=NO_GRAPH)
    message = str(info.value)
    assert "LlamaIndex embedding llamaindex:MockEmbedding" in message
    assert "embed_model=" in message and "\n" not in message
