"""trilha inside LlamaIndex: retriever, query engine, tool, postprocessor."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, QueryBundle
from llama_index.core.tools import RetrieverTool
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

from trilha.errors import BadRequestError
from trilha.llamaindex import SCORE_KEYS, CrossEncoderRerank, TrilhaEmbedding, TrilhaRetriever
from trilha.llamaindex.nodes import node_to_hit
from trilha.workspace import Workspace


def test_retriever_nodes_carry_hidden_scores(small_ws: Workspace) -> None:
    nodes = TrilhaRetriever(small_ws, top_k=3).retrieve("security incident")
    node = nodes[0].node
    assert node.node_id == "runbook#0" and node.ref_doc_id == "runbook"
    assert set(SCORE_KEYS) <= set(node.metadata)
    llm_view = node.get_content(metadata_mode=MetadataMode.LLM)
    embed_view = node.get_content(metadata_mode=MetadataMode.EMBED)
    assert "trilha_bm25" not in llm_view and "doc_id: runbook" in llm_view
    assert embed_view == node.get_content(metadata_mode=MetadataMode.NONE)


def test_retriever_async_and_filters(small_ws: Workspace) -> None:
    mf = MetadataFilters(filters=[MetadataFilter(key="lang", value="pt")])
    retriever = TrilhaRetriever(small_ws, top_k=4, filters=mf)
    nodes = asyncio.run(retriever.aretrieve("incident"))
    assert len(nodes) == 4 and all(n.node.metadata["lang"] == "pt" for n in nodes)
    assert not hasattr(retriever, "last_trace")  # no per-call state on a shared retriever
    result = asyncio.run(retriever.asearch("incident"))
    assert [h.unit.unit_id for h in result.hits] == [n.node.node_id for n in nodes]
    assert result.trace.principal is not None and result.trace.principal.startswith("anonymous")


def test_query_bundle_embedding_is_reused(small_ws: Workspace) -> None:
    vec = small_ws.embedder.encode_queries(["VPN laptop"])[0].tolist()
    retriever = TrilhaRetriever(small_ws, top_k=2)
    result = retriever.search(QueryBundle("VPN laptop", embedding=vec))
    assert result.hits and result.trace.stage("encode") is None


def test_query_engine_with_rerank_and_tool(small_ws: Workspace, tiny_cross_encoder: Path) -> None:
    retriever = TrilhaRetriever(small_ws, top_k=6)
    rerank = CrossEncoderRerank(str(tiny_cross_encoder), top_n=2)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM(), node_postprocessors=[rerank])
    response = engine.query("security incident deadline")
    assert len(response.source_nodes) == 2
    meta = response.source_nodes[0].node.metadata
    assert meta["trilha_rerank_rank"] == 1 and meta["trilha_fused_rank"] is not None
    tool = RetrieverTool.from_defaults(
        retriever, name="trilha_search", description="Search company documents"
    )
    output = tool.call("VPN")
    assert output.tool_name == "trilha_search" and "VPN" in output.content


def test_node_roundtrip_keeps_unit_and_scores(small_ws: Workspace) -> None:
    from trilha.llamaindex import hit_to_node

    hit = small_ws.search("VPN", top_k=1).hits[0]
    back = node_to_hit(hit_to_node(hit))
    assert back.unit.unit_id == hit.unit.unit_id and back.scores == hit.scores
    assert back.unit.tags == hit.unit.tags and back.unit.lang == hit.unit.lang


def test_embedding_adapter_matches_encoder(small_ws: Workspace) -> None:
    emb = TrilhaEmbedding(small_ws.embedder)
    got = emb.get_query_embedding("hello")
    assert len(got) == 384
    assert abs(sum(x * x for x in got) - 1.0) < 1e-4


def test_kg_boost_without_a_graph_marks_nodes_and_keeps_no_state(small_ws: Workspace) -> None:
    from llama_index.core.schema import MetadataMode

    from trilha.llamaindex.postprocessors import KG_WARNING_KEY, KnowledgeGraphBoost
    from trilha.retrieve.pipeline import UnavailableBooster

    nodes = TrilhaRetriever(small_ws, top_k=3, kg=False).retrieve("security incident")
    boost = KnowledgeGraphBoost(UnavailableBooster("graph down: connection refused"))
    out = boost.postprocess_nodes(nodes, query_str="security incident")
    assert [n.node.node_id for n in out] == [n.node.node_id for n in nodes]
    assert all(n.node.metadata[KG_WARNING_KEY].startswith("graph down") for n in out)
    assert KG_WARNING_KEY not in nodes[0].node.metadata  # the caller's nodes are untouched
    assert "graph down" not in out[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert not hasattr(boost, "last_warning")


def test_search_tool_binds_the_principal_and_cites(small_ws: Workspace) -> None:
    from trilha.access import Principal
    from trilha.llamaindex import search_tool
    from trilha.types import SearchResult

    tool = search_tool(small_ws, merge="rrf")
    assert tool.metadata.name == "trilha_search"
    out = tool.call(query="security incident", top_k=2, lang="en")
    assert isinstance(out.raw_output, SearchResult) and len(out.raw_output.hits) == 2
    first = out.raw_output.hits[0].unit
    assert f"({first.doc_id}, {first.unit_id}" in out.content
    assert out.raw_output.trace.merge == "rrf"
    later = asyncio.run(tool.acall(query="security incident", top_k=2, lang="en"))
    assert later.content == out.content
    # a principal the tool was made for cannot be changed by the caller's arguments
    nobody = Principal(user_id="x", clearance=0)
    assert "principal" not in tool.metadata.get_parameters_dict()["properties"]
    assert search_tool(small_ws, principal=nobody).call(query="vpn").raw_output.trace.principal
    with pytest.raises(BadRequestError, match="top_k"):
        search_tool(small_ws, top_k=0)
