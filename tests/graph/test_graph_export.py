"""Mermaid escaping, context.md rendering and the PNG drawing."""

from __future__ import annotations

import re
import struct
import warnings
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trilha.errors import BadRequestError
from trilha.graph.export.context import ContextData, build_context, render_context_md
from trilha.graph.export.drawing import captions, circular_layout, draw_png, spring_layout
from trilha.graph.export.fonts import cjk_font, font_paths
from trilha.graph.export.layout import bfs_tree, line_layout, radial_layout
from trilha.graph.export.mermaid import escape_label, mermaid, mermaid_from, mermaid_id
from trilha.graph.read.path import path
from trilha.graph.read.results import (
    GraphEdge,
    GraphNode,
    SubgraphConstraints,
    SubgraphQuery,
    SubgraphResult,
    TopNItem,
)
from trilha.graph.read.subgraph import subgraph
from trilha.graph.read.topn import topn
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore

ID = r"[A-Za-z0-9_]+"
NODE = rf'{ID}(\["[^"\n]*"\])?'
ARROW = r'-->|-\. "RELATED( \(\d\.\d\d\))?" \.->|-->\|[A-Z_]+\|'
LINE = re.compile(rf"^  (%% [a-z ]+|{NODE}|{NODE} ({ARROW}) {NODE})$")


def assert_mermaid(text: str) -> None:
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "graph LR"
    for line in lines[1:]:
        assert LINE.match(line), line


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("plain", "plain"),
        ('say "hi"', "say #quot;hi#quot;"),
        ("#1; <b>&", "#35;1; #lt;b#gt;#amp;"),
        ("back`tick", "back#96;tick"),
        ("[a] | {b} (c)", "[a] | {b} (c)"),
        ("two\nlines\t here", "two lines here"),
        ("日本語 🚀", "日本語 🚀"),
        ("x" * 70, "x" * 59 + "…"),
    ],
)
def test_escape_label(raw: str, escaped: str) -> None:
    assert escape_label(raw) == escaped


@pytest.mark.parametrize(
    ("display", "mid"),
    [
        ("Entity:Neo4j", "entity_Neo4j"),
        ("Doc:zh/guide/some-article", "doc_zh_guide_some_article"),
        ("Entity:São Paulo", "entity_S_o_Paulo"),
        ("Chunk:a#1", "chunk_a_1"),
        ("Tag:", "tag_"),
    ],
)
def test_mermaid_id(display: str, mid: str) -> None:
    assert mermaid_id(display) == mid


def test_mermaid_seed_shape() -> None:
    nodes = [
        GraphNode(id="Doc:zh/guide/some-article", label="Doc", title="GraphRAG 入门"),
        GraphNode(id="Chunk:zh/guide/some-article#1", label="Chunk", ordinal=1),
        GraphNode(id="Entity:GraphRAG", label="Entity", name="GraphRAG"),
        GraphNode(id="Entity:Neo4j", label="Entity", name="Neo4j"),
        GraphNode(id="Category:guide", label="Category", name="guide"),
        GraphNode(id="Tag:graphrag", label="Tag", name="graphrag"),
    ]
    c, d = "Chunk:zh/guide/some-article#1", "Doc:zh/guide/some-article"
    edges = [
        GraphEdge(source=c, target=d, type="PART_OF"),
        GraphEdge(source=c, target="Entity:GraphRAG", type="MENTIONS"),
        GraphEdge(source=c, target="Entity:Neo4j", type="MENTIONS"),
        GraphEdge(source="Entity:GraphRAG", target="Entity:Neo4j", type="RELATED", weight=0.73),
        GraphEdge(source=d, target="Category:guide", type="IN_CATEGORY"),
        GraphEdge(source=d, target="Tag:graphrag", type="HAS_TAG"),
    ]
    assert mermaid_from(nodes, edges) == (
        "graph LR\n"
        "  %% documents and chunks\n"
        '  doc_zh_guide_some_article["Doc｜GraphRAG 入门"] --> chunk_zh_guide_some_article_1'
        '["Chunk#35;1"]\n'
        '  chunk_zh_guide_some_article_1 --> entity_GraphRAG["Entity｜GraphRAG"]\n'
        '  chunk_zh_guide_some_article_1 --> entity_Neo4j["Entity｜Neo4j"]\n'
        "  %% entity relations\n"
        '  entity_GraphRAG -. "RELATED (0.73)" .-> entity_Neo4j\n'
        "  %% categories and tags\n"
        '  doc_zh_guide_some_article --> category_guide["Category｜guide"]\n'
        '  doc_zh_guide_some_article --> tag_graphrag["Tag｜graphrag"]\n'
    )


def test_mermaid_hostile_labels_and_collisions() -> None:
    names = ['q"uote', "a-b", "a_b", "pi|pe [x]", "`tick`", "end", "new\nline", "日本"]
    nodes = [GraphNode(id=f"Entity:{n}", label="Entity", name=n) for n in names]
    nodes.append(GraphNode(id="Task:t1", label="Task", title="x"))
    edges = [
        GraphEdge(source=f"Entity:{a}", target=f"Entity:{b}", type="RELATED")
        for a, b in pairwise(names)
    ]
    edges.append(GraphEdge(source="Task:t1", target="Entity:end", type="REFERENCES"))
    text = mermaid_from(nodes, edges)
    assert_mermaid(text)
    assert "entity_a_b[" in text and "entity_a_b_2[" in text  # collision made unique
    assert "-->|REFERENCES|" in text


@given(st.lists(st.text(max_size=30), min_size=1, max_size=6, unique=True))
def test_mermaid_any_names(names: list[str]) -> None:
    nodes = [GraphNode(id=f"Entity:{n}", label="Entity", name=n) for n in names]
    edges = [
        GraphEdge(source=f"Entity:{a}", target=f"Entity:{b}", type="RELATED", weight=0.5)
        for a, b in pairwise(names)
    ]
    text = mermaid_from(nodes, edges)
    assert_mermaid(text)
    # labels are quoted and never contain '"' (escaped as #quot;): blank them before parsing ids
    skeleton = re.sub(r'"[^"]*"', '""', text)
    ids = re.findall(rf"({ID})\[\"\"\]", skeleton)
    assert len(ids) == len(set(ids)) == len(names)


def test_mermaid_of_real_results(corpus: GraphStore) -> None:
    sub = mermaid(subgraph(corpus, "guide/graphrag", None, 2, 30))
    assert_mermaid(sub)
    assert '-. "RELATED (0.67)" .->' in sub
    assert "doc_guide_graphrag" in sub.split("\n")[2]
    walk = mermaid(path(corpus, "GraphRAG", "Cypher", 4))
    assert walk == (
        "graph LR\n  %% entity relations\n"
        '  entity_GraphRAG["Entity｜GraphRAG"] -. "RELATED (0.50)" .-> entity_Neo4j'
        '["Entity｜Neo4j"]\n'
        '  entity_Neo4j -. "RELATED (0.50)" .-> entity_Cypher["Entity｜Cypher"]\n'
    )


CTX = ContextData(
    entity_names=["GraphRAG", "Neo4j"],
    doc_titles=["GraphRAG 入门", "Neo4j *guide*"],
    time_range="2024-01-01 – 2024-05-20",
    mermaid_graph="graph LR\n  a --> b\n",
    edges=[
        GraphEdge(source="Entity:GraphRAG", target="Entity:Neo4j", type="RELATED", weight=0.73),
        GraphEdge(source="Chunk:c1", target="Entity:Neo4j", type="MENTIONS"),
    ],
    limit=5,
    top_docs=[
        TopNItem(
            doc_id="zh/a",
            title="GraphRAG 入门",
            updated_at="2024-05-20T12:00:00Z",
            score=0.87,
            reasons=["包含实体 GraphRAG（salience 0.92）", "分类匹配 guide"],
        )
    ],
)


def test_context_md_zh_follows_the_seed_template() -> None:
    assert render_context_md(CTX, "zh") == (
        "# 问题背景\n"
        "- 查询实体：GraphRAG, Neo4j\n"
        "- 关联文档：GraphRAG 入门、Neo4j \\*guide\\*\n"
        "- 时间范围：2024-01-01 – 2024-05-20\n"
        "\n"
        "# 重点子图\n"
        "```mermaid\n"
        "graph LR\n"
        "  a --> b\n"
        "```\n"
        "\n"
        "# 证据路径\n"
        "- Entity:GraphRAG --RELATED (0.73)--> Entity:Neo4j\n"
        "- Chunk:c1 --MENTIONS--> Entity:Neo4j\n"
        "\n"
        "# 推荐文档（Top 5)\n"
        "1. **GraphRAG 入门**（2024-05-20T12:00:00Z）  \n"
        "   包含实体 GraphRAG（salience 0.92）；分类匹配 guide\n"
    )


def test_context_md_en_and_empty() -> None:
    text = render_context_md(CTX, "en")
    assert text.startswith("# Background\n- Query entities: GraphRAG, Neo4j\n")
    assert (
        "# Recommended documents (Top 5)\n1. **GraphRAG 入门** (2024-05-20T12:00:00Z)  \n" in text
    )
    empty = render_context_md(ContextData(), "pt")
    assert "- Entidades consultadas: nenhum\n" in empty and "```mermaid\ngraph LR\n```" in empty


def test_build_context_from_results(corpus: GraphStore) -> None:
    sub = subgraph(corpus, "guide/graphrag", None, 2, 30)
    walk = path(corpus, "GraphRAG", "Cypher", 4)
    top = topn(corpus, ["Neo4j"], "guide", None, 5)
    data = build_context(sub, walk, top.items, entity_names=["Neo4j"], limit=5)
    assert data.doc_titles == ["GraphRAG intro", "Old notes"]
    assert data.time_range == "2021-01-01 – 2024-05-20"
    assert data.edges[:2] == walk.edges
    mentions = [e for e in data.edges if e.type != "RELATED"]  # evidence for the query entity
    assert [(e.source, e.type, e.target) for e in mentions] == [
        ("Chunk:guide/graphrag#0", "MENTIONS", "Entity:Neo4j"),
        ("Chunk:guide/graphrag#1", "MENTIONS", "Entity:Neo4j"),
    ]
    assert data.edges[-2:] == mentions and len(data.edges) == len(set(data.edges))
    text = render_context_md(data)
    assert "```mermaid\ngraph LR\n" in text and "**GraphRAG intro**" in text


def test_context_md_follows_the_template_language_not_the_filter(corpus: GraphStore) -> None:
    service = GraphService(corpus)
    text = service.context_md(None, ["STJ"], language="pt", limit=1, lang="zh")
    assert text.endswith(
        "# 推荐文档（Top 1)\n"
        "1. **REsp 1 — dano moral**（2023-03-10T00:00:00Z）  \n"
        "   包含实体 STJ（salience 1.00）；通过 LGPD 关联 STJ（权重 0.67）（另有 1 项）；"
        "最近更新：2023-03-10\n"
    )
    english = service.context_md(None, ["STJ"], language="pt", limit=1)
    assert "mentions entity STJ (salience 1.00)" in english
    with pytest.raises(BadRequestError, match="template language 'fr'"):
        service.context_md(None, ["STJ"], lang="fr")


def test_context_md_without_a_document_shows_the_entities_best_one(corpus: GraphStore) -> None:
    text = GraphService(corpus).context_md(None, ["cypher"])
    subgraph = text.split("```mermaid\n")[1].split("```")[0]
    assert_mermaid(subgraph)
    assert 'chunk_guide_graphrag_1 --> entity_Cypher["Entity｜Cypher"]' in subgraph
    assert "- Chunk:guide/graphrag#1 --MENTIONS--> Entity:Cypher\n" in text


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


@pytest.mark.parametrize("layout", ["radial", "circular", "spring"])
def test_draw_png(corpus: GraphStore, tmp_path: Path, layout: str) -> None:
    sub = subgraph(corpus, "guide/graphrag", None, 2, 30)
    out = draw_png(sub, tmp_path / "g" / f"{layout}.png", layout=layout)  # type: ignore[arg-type]
    assert png_size(out) == (1200, 900) and out.stat().st_size > 5000
    walk = draw_png(path(corpus, "GraphRAG", "Cypher", 4), tmp_path / "p.png", dpi=50)
    assert png_size(walk) == (600, 450)


def test_draw_empty(tmp_path: Path) -> None:
    from trilha.graph.read.results import PathMeta, PathResult

    empty = PathResult(path=[], edges=[], meta=PathMeta(length=None, max_length=4, found=False))
    assert png_size(draw_png(empty, tmp_path / "e.png")) == (1200, 900)


ZH_NODES = [
    GraphNode(id="Doc:zh/guide/a", label="Doc", title="图数据库入门"),
    GraphNode(id="Chunk:zh/guide/a#3", label="Chunk", ordinal=3),
    GraphNode(id="Entity:图数据库", label="Entity", name="图数据库"),
    GraphNode(id="Entity:Neo4j", label="Entity", name="Neo4j"),
    GraphNode(id="Entity:x", label="Entity", name="Quarta Turma do Superior Tribunal"),
]


def test_captions_without_a_cjk_font_are_ids_or_positions_never_boxes() -> None:
    latin_only = (font_paths(None)[0],)
    texts, replaced = captions(ZH_NODES, latin_only)
    assert texts == ["zh/guide/a", "#3", "[2]", "Neo4j", "Quarta Turma do Super…"]
    assert replaced


def test_captions_with_a_cjk_font() -> None:
    family = cjk_font()
    if family is None:
        pytest.skip("no CJK font on this machine")
    texts, replaced = captions(ZH_NODES, font_paths(family))
    assert texts[:3] == ["图数据库入门", "#3", "图数据库"] and not replaced


def test_a_chinese_subgraph_draws_without_missing_glyphs(tmp_path: Path) -> None:
    sub = SubgraphResult(
        nodes=ZH_NODES[:4],
        edges=[
            GraphEdge(source="Chunk:zh/guide/a#3", target="Doc:zh/guide/a", type="PART_OF"),
            GraphEdge(source="Chunk:zh/guide/a#3", target="Entity:图数据库", type="MENTIONS"),
            GraphEdge(source="Chunk:zh/guide/a#3", target="Entity:Neo4j", type="MENTIONS"),
            GraphEdge(source="Entity:图数据库", target="Entity:Neo4j", type="RELATED", weight=0.5),
        ],
        constraints=SubgraphConstraints(max_hops=2, limit=30, truncated=False),
        query=SubgraphQuery(doc_id="zh/guide/a", entity_names=None),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draw_png(sub, tmp_path / "zh.png")
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_radial_layout_rings_by_hops() -> None:
    # 0 -> 1, 2; 1 -> 3, 4; 2 -> 5; 6 unreached
    pos = radial_layout(7, [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5)])
    radius = np.linalg.norm(pos, axis=1)
    assert np.allclose(radius, [0, 1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3, 1])
    assert bfs_tree(4, [(0, 1), (1, 2)]) == ([-1, 0, 1, -1], [0, 1, 2, 3])
    assert np.allclose(line_layout(3), [[-1, 0], [0, 0], [1, 0]])


def test_layouts() -> None:
    assert np.allclose(circular_layout(4), [[1, 0], [0, 1], [-1, 0], [0, -1]], atol=1e-9)
    pos = spring_layout(6, [(0, 1), (1, 2), (2, 0), (3, 4)], seed=3)
    assert pos.shape == (6, 2) and np.abs(pos).max() <= 1.0 + 1e-9
    assert np.array_equal(pos, spring_layout(6, [(0, 1), (1, 2), (2, 0), (3, 4)], seed=3))
    assert spring_layout(1, []).shape == (0, 2) or spring_layout(1, []).shape == (1, 2)
