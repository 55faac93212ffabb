"""Chinese documents (seed 003) in a mixed zh/en/pt workspace: BM25, entities, top-N, CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_docs
from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

#: Chinese documents without a language (they default to 'en', as files without one do).
ZH = {
    "zh/guide/graph-db": (
        "图数据库入门",
        "图数据库以节点和边存储数据，适合查询复杂的关系。Neo4j 是最常见的图数据库之一。",
    ),
    "zh/guide/vector-db": (
        "向量检索",
        "向量数据库保存文本的嵌入向量，通过近似最近邻搜索找到语义相似的段落。",
    ),
    "zh/guide/kg": (
        "知识图谱",
        "知识图谱把实体和关系组织成网络，可以用于问答和推荐系统。",
    ),
}


def zh_docs() -> list[SourceDocument]:
    """The Chinese documents, dated, in category 'guide'."""
    return [
        SourceDocument(
            doc_id=doc_id,
            text=text,
            meta={"title": title, "date": "2024-05-20", "category": "guide"},
        )
        for doc_id, (title, text) in ZH.items()
    ]


@pytest.fixture(scope="module")
def mixed_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """The eight en/pt documents of the suite plus the three Chinese ones (read-only)."""
    folder = tmp_path_factory.mktemp("mixed") / "ws"
    ws = Workspace.open(folder, TrilhaSettings(), embedder=embedder, create=True)
    ws.ingest([*make_docs(), *zh_docs()])
    yield ws
    ws.close()


def test_bm25_finds_the_chinese_document_that_contains_the_term(mixed_ws: Workspace) -> None:
    hits = mixed_ws.search("图数据库", top_k=3, sides=("bm25",), kg=False).hits
    assert hits[0].unit.doc_id == "zh/guide/graph-db"
    assert hits[0].unit.lang == "zh"  # ingested without a language: detected
    assert {h.unit.doc_id for h in hits} <= set(ZH)
    assert mixed_ws.search("向量数据库", top_k=1, sides=("bm25",), kg=False).hits[
        0
    ].unit.doc_id == ("zh/guide/vector-db")


def test_hybrid_search_ranks_the_chinese_document_first(mixed_ws: Workspace) -> None:
    assert mixed_ws.search("图数据库", top_k=3).hits[0].unit.doc_id == "zh/guide/graph-db"


def test_the_graph_of_a_chinese_document_has_its_terms(mixed_ws: Workspace) -> None:
    graph = mixed_ws.require_graph()
    top = graph.topn(["图数据库"], limit=3)
    assert [i.doc_id for i in top.items] == ["zh/guide/graph-db"]
    sub = graph.subgraph("zh/guide/graph-db")
    assert "Entity:图数据库" in {n.id for n in sub.nodes}


def test_cli_topn_finds_a_chinese_entity(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    with Workspace.open(tmp_path / "ws", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(zh_docs())
    capsys.readouterr()
    args = ["graph", "topn", "-w", str(tmp_path / "ws"), "--entity", "图数据库", "--json"]
    assert main([*args, "--lang", "zh"]) == 0
    (item,) = json.loads(capsys.readouterr().out)["items"]
    assert item["doc_id"] == "zh/guide/graph-db"
    assert item["updated_at"] == "2024-05-20T00:00:00Z"
    assert item["reasons"][0].startswith("包含实体 图数据库（salience ")
    assert item["reasons"][-1] == "最近更新：2024-05-20" and len(item["reasons"]) <= 3
