"""Terminal text of metric tables and graph reads, and the query options' filter fields."""

from __future__ import annotations

import math

from pydantic import BaseModel

from trilha.cli.main import build_parser
from trilha.cli.query import filters_of
from trilha.cli.render import graph_text, table_text


class _Items(BaseModel):
    items: list[dict[str, object]]


class _Subgraph(BaseModel):
    nodes: list[str]
    edges: list[dict[str, str]]
    constraints: dict[str, int]


def test_table_text_aligns_columns_and_marks_missing_values() -> None:
    text = table_text({"bm25": {"p50_ms": 1.5, "qps": 20.0}}, ("p50_ms", "qps", "p95_ms"))
    header, row = text.split("\n")
    assert header == f"{'system':<28}{'p50_ms':>12}{'qps':>12}{'p95_ms':>12}"
    assert row == f"{'bm25':<28}{'1.5000':>12}{'20.0000':>12}{math.nan:>12.4f}"


def test_graph_text_of_top_documents_and_of_a_subgraph() -> None:
    top = _Items(items=[{"score": 0.5, "doc_id": "d1", "title": "", "reasons": ["a", "b"]}])
    assert graph_text(top) == "1. [0.500] d1 — (untitled)\n   a; b"
    assert graph_text(_Items(items=[])) == "(no documents)"
    sub = _Subgraph(
        nodes=["x", "y"], edges=[{"source": "x", "type": "R", "target": "y"}], constraints={"k": 1}
    )
    assert graph_text(sub) == '2 nodes, 1 edges\n  x -[R]-> y\n  limits: {"k": 1}'


def test_query_options_become_filter_fields_with_the_json_last() -> None:
    argv = ["query", "q", "--tags", "a,b,", "--lang", "pt", "--date-from", "2024-01-01"]
    argv += ["--tipos-recurso", "x, y", "--max-sensitivity", "0", "--filters", '{"lang": "en"}']
    args = build_parser().parse_args(argv)
    assert filters_of(args) == {
        "tags": ["a", "b"],
        "lang": "en",
        "data_inicio": "2024-01-01",
        "tipos_recurso": ["x", "y"],
        "max_sensitivity": 0,
    }
    assert filters_of(build_parser().parse_args(["query", "q"])) is None
