"""trilha's search stages reach LlamaIndex's instrumentation: a span handler on the root
dispatcher (what tracing tools attach) sees each stage, with its latency, under the retriever."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.span_handlers import SimpleSpanHandler

from trilha.llamaindex.retriever import TrilhaRetriever
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.workspace import Workspace

STAGES = {"search", "cache", "expansion", "bm25", "dense", "kg", "fusion", "rerank"}


@pytest.fixture()
def handler() -> Iterator[SimpleSpanHandler]:
    """A span handler on LlamaIndex's root dispatcher for the test only."""
    root = get_dispatcher()
    handler = SimpleSpanHandler()
    root.add_span_handler(handler)
    yield handler
    root.span_handlers.remove(handler)


def _name(span_id: str) -> str:
    return span_id.partition("-")[0]


def test_each_stage_is_a_span_under_the_retriever(
    small_ws: Workspace, tiny_cross_encoder: Path, handler: SimpleSpanHandler
) -> None:
    small_ws.use_reranker(CrossEncoderReranker(str(tiny_cross_encoder), top_n=2))
    retriever = TrilhaRetriever(small_ws, expand=True, kg=True, rerank=True, top_k=2)
    assert retriever.retrieve("vpn laptop")
    spans = {_name(s.id_): s for s in handler.completed_spans}
    assert {f"trilha.{stage}" for stage in STAGES} <= set(spans)
    by_id = {s.id_: s for s in handler.completed_spans}
    for stage in STAGES:
        span = spans[f"trilha.{stage}"]
        assert span.tags["trilha.stage"] == stage and span.duration > 0
        chain = [span]
        while chain[-1].parent_id is not None:  # up to the retriever's own span
            chain.append(by_id[chain[-1].parent_id])
        assert _name(chain[-1].id_) == "TrilhaRetriever.retrieve", stage
        assert stage == "search" or _name(chain[1].id_) == "trilha.search"

    handler.completed_spans.clear()
    retriever.retrieve("vpn laptop")  # answered from the result cache
    trilha = {_name(s.id_) for s in handler.completed_spans if s.id_.startswith("trilha.")}
    assert trilha == {"trilha.search", "trilha.cache"}, trilha


def test_async_stages_are_spans_too(small_ws: Workspace, handler: SimpleSpanHandler) -> None:
    asyncio.run(small_ws.asearch("vpn laptop", kg=True, top_k=2))
    names = {_name(s.id_) for s in handler.completed_spans}
    assert {"trilha.search", "trilha.bm25", "trilha.dense", "trilha.kg", "trilha.fusion"} <= names
    search = next(s for s in handler.completed_spans if _name(s.id_) == "trilha.search")
    sides = [s for s in handler.completed_spans if _name(s.id_) in ("trilha.bm25", "trilha.dense")]
    assert {s.parent_id for s in sides} == {search.id_}


def test_a_search_while_another_thread_imports_llamaindex_sends_no_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The demo imports LlamaIndex on one thread while another searches: the half-imported
    instrumentation module (in sys.modules, its names not yet bound) means no listener, not an
    AttributeError out of the search."""
    import importlib.machinery
    import sys
    import types

    from trilha.retrieve import pipeline as spans

    half = types.ModuleType(spans.INSTRUMENTATION)
    half.__spec__ = importlib.machinery.ModuleSpec(spans.INSTRUMENTATION, None)
    half.__spec__._initializing = True  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, spans.INSTRUMENTATION, half)
    assert spans.listening() is None
    with spans.stage_span("bm25"):
        pass
