"""Filters mean one thing on every path: known keys only, one case rule, no empty lists."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

from tests.conftest import make_docs
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError
from trilha.index.filter_input import coerce_filters
from trilha.index.filters import Condition, FilterExpr, check_keys
from trilha.ingest.chunking import chunk_document
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import SearchFilters, Side
from trilha.workspace import Workspace

QUERY = "prazo recurso dados security vpn laptop despesas"
EVERY_SIDE: list[tuple[Side, ...]] = [("bm25",), ("semantic",), ("bm25", "semantic")]


def _rulings() -> list[SourceDocument]:
    rows = [
        ("stf-fux", "Fux", "REsp", "O prazo do recurso especial conta em dias úteis."),
        ("stf-carmen", "cármen lúcia", "RE", "O recurso extraordinário exige repercussão geral."),
    ]
    brazilian = SourceDocument(
        doc_id="stj-br",
        text="O prazo de recurso no STJ.",
        source_type="text",
        meta={"lang": "pt_br"},
    )
    return [
        SourceDocument(
            doc_id=d,
            text=t,
            source_type="text",
            meta={"lang": "pt", "ministro": m, "tipo_recurso": r, "orgao": "STF", "a.b": "x"},
        )
        for d, m, r, t in rows
    ] + [brazilian]


@pytest.fixture(scope="module")
def ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """make_docs() plus two rulings with domain fields (ministro, tipo_recurso, orgao, 'a.b')
    and one in Brazilian Portuguese (written ``pt_br``)."""
    path: Path = tmp_path_factory.mktemp("rules") / "ws"
    workspace = Workspace.open(path, TrilhaSettings(), embedder=embedder, create=True)
    workspace.ingest([*make_docs(), *_rulings()])
    yield workspace
    workspace.close()


def _docs(ws: Workspace, filters: Any, sides: tuple[Side, ...] = ("bm25", "semantic")) -> set[str]:
    return {h.unit.doc_id for h in ws.search(QUERY, top_k=20, filters=filters, sides=sides).hits}


def _refusal(ws: Workspace, filters: Any, sides: tuple[Side, ...] = ("bm25", "semantic")) -> str:
    with pytest.raises(BadRequestError) as e:
        ws.search(QUERY, top_k=5, filters=filters, sides=sides)
    message = str(e.value)
    assert "\n" not in message
    return message


def _mf(key: str, value: Any, op: FilterOperator = FilterOperator.EQ) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key=key, value=value, operator=op)])


# -- keys -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("sides", EVERY_SIDE)
@pytest.mark.parametrize("op", [FilterOperator.EQ, FilterOperator.NE])
def test_tags_brackets_key_is_refused_on_every_side(
    ws: Workspace, sides: tuple[Side, ...], op: FilterOperator
) -> None:
    # Qdrant reads 'tags[]' as "any element of tags", BM25 as a column nobody has: refused
    message = _refusal(ws, _mf("tags[]", "ti", op), sides)
    assert "'tags[]'" in message and "'tags'" in message


def test_the_plain_key_excludes_what_it_says(ws: Workspace) -> None:
    with_ti = {"runbook", "vendor", "lgpd"}
    assert _docs(ws, _mf("tags", "ti", FilterOperator.NE)).isdisjoint(with_ti)
    assert _docs(ws, _mf("tags", "ti")) == with_ti


@pytest.mark.parametrize("key", ["tag", "Tags", "ministros", "text", "", " lang"])
def test_unknown_keys_are_refused_with_the_keys_that_exist(ws: Workspace, key: str) -> None:
    message = _refusal(ws, _mf(key, "x"))
    assert repr(key) in message and "doc_id" in message


def test_nested_unknown_keys_are_refused(ws: Workspace) -> None:
    mf = MetadataFilters(
        filters=[
            MetadataFilter(key="lang", value="pt"),
            MetadataFilters(filters=[_mf("orgao", "STF"), _mf("tipo", "RE")], condition="or"),
        ]
    )
    assert "'tipo'" in _refusal(ws, mf)


def test_keys_of_the_corpus_are_filterable(ws: Workspace) -> None:
    assert _docs(ws, _mf("orgao", "STF")) == {"stf-fux", "stf-carmen"}
    assert _docs(ws, _mf("tipo_recurso", ["RE"], FilterOperator.IN)) == {"stf-carmen"}


def test_a_stored_key_that_reads_as_a_path_is_refused(ws: Workspace) -> None:
    # ingest keeps 'a.b' as one flat field; Qdrant would read it as the path a -> b
    message = _refusal(ws, _mf("a.b", "x"))
    assert "'a.b'" in message and "letters, digits" in message


def test_check_keys_accepts_corpus_keys_and_walks_nested_expressions() -> None:
    inner = FilterExpr(parts=[Condition(key="orgao", op="eq", value="STF")])
    check_keys(
        FilterExpr(mode="or", parts=[Condition(key="lang", op="eq", value="pt"), inner]), {"orgao"}
    )
    with pytest.raises(BadRequestError, match="'orgao'"):
        check_keys(FilterExpr(parts=[inner]), set())


# -- case -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"ministro": "fux"}, {"stf-fux"}),
        (SearchFilters(ministro="FuX"), {"stf-fux"}),
        (_mf("ministro", "fux"), {"stf-fux"}),
        (_mf("ministro", "Cármen Lúcia"), {"stf-carmen"}),
        (_mf("ministro", ["fux", "nobody"], FilterOperator.IN), {"stf-fux"}),
        (_mf("ministro", ["FUX"], FilterOperator.ANY), {"stf-fux"}),
        (_mf("ministro", "fux", FilterOperator.CONTAINS), {"stf-fux"}),
    ],
)
def test_ministro_matches_whatever_the_case_on_every_path(
    ws: Workspace, filters: Any, expected: set[str]
) -> None:
    for sides in EVERY_SIDE:
        assert _docs(ws, filters, sides) == expected


def test_case_insensitive_exclusion(ws: Workspace) -> None:
    got = _docs(ws, _mf("ministro", "fux", FilterOperator.NE))
    assert "stf-carmen" in got and "stf-fux" not in got


def test_other_keys_keep_their_case(ws: Workspace) -> None:
    assert _docs(ws, _mf("orgao", "stf")) == set()
    assert _docs(ws, {"tags": ["TI"]}) == set()


# -- empty lists ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "filters",
    [
        {"tags": []},
        {"doc_ids": []},
        {"setor": []},
        {"lang": []},
        {"tipos_recurso": []},
        _mf("tags", [], FilterOperator.IN),
        _mf("tags", [], FilterOperator.NIN),
        _mf("tags", [], FilterOperator.ANY),
        _mf("tags", [], FilterOperator.ALL),
    ],
)
def test_an_empty_list_is_refused_on_every_path(ws: Workspace, filters: Any) -> None:
    assert "empty" in _refusal(ws, filters)


@pytest.mark.parametrize("field", ["tags", "doc_ids", "setor", "tema", "lang", "tipos_recurso"])
def test_search_filters_refuse_an_empty_list(field: str) -> None:
    with pytest.raises(ValueError, match="an empty list matches nothing"):
        SearchFilters.model_validate({field: []})
    with pytest.raises(BadRequestError, match=f"^invalid filters: {field}: an empty list"):
        coerce_filters({field: []})


# -- one line -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("filters", "needle"),
    [
        ({"tag": "x"}, "'tag'"),
        ({"lang": 3}, "lang"),
        ({"tags": [], "ministro": 4}, "tags"),
        (_mf("tags", None), "tags"),
    ],
)
def test_bad_filters_are_one_line(filters: Any, needle: str) -> None:
    with pytest.raises(BadRequestError) as e:
        coerce_filters(filters)
    assert "\n" not in str(e.value) and needle in str(e.value)


@pytest.mark.parametrize("value", [True, [1, False]])
def test_true_false_values_are_refused(value: Any) -> None:
    # qdrant-edge reads True as 1, local Qdrant and BM25 as a bool: no agreed meaning
    with pytest.raises(ValueError, match="not true/false"):
        Condition(key="v", op="in" if isinstance(value, list) else "eq", value=value)


def test_ingest_folds_a_list_of_ministros() -> None:
    doc = SourceDocument(doc_id="x", text="t", source_type="text", meta={"ministro": ["Fux"]})
    assert chunk_document(doc)[0].extra["ministro"] == ["FUX"]


# -- languages and blanks -------------------------------------------------------------------------
PORTUGUESE = {"stf-fux", "stf-carmen", "stj-br"}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"lang": "pt"}, PORTUGUESE),  # a bare code is the whole family
        ({"lang": "PT"}, PORTUGUESE),  # written as documents' codes are
        ({"lang": "pt-BR"}, {"stj-br"}),
        ({"lang": "pt_br"}, {"stj-br"}),
        ({"lang": ["pt-BR", "es-MX"]}, {"stj-br"}),
        (SearchFilters(lang="pt"), PORTUGUESE),
        (_mf("lang", "pt"), PORTUGUESE),
        (_mf("lang", ["pt"], FilterOperator.IN), PORTUGUESE),
    ],
)
def test_a_language_filter_means_one_thing_on_every_path(
    ws: Workspace, filters: Any, expected: set[str]
) -> None:
    for sides in EVERY_SIDE:
        assert _docs(ws, filters, sides) & {*PORTUGUESE, "x"} == expected


def test_excluding_a_language_excludes_its_family(ws: Workspace) -> None:
    for sides in EVERY_SIDE:
        got = _docs(ws, _mf("lang", "pt", FilterOperator.NE), sides)
        assert got and not got & PORTUGUESE
        assert "stj-br" not in _docs(ws, _mf("lang", ["pt-BR"], FilterOperator.NIN), sides)


@pytest.mark.parametrize(
    "filters", [{"lang": "klingon"}, _mf("lang", "klingon"), SearchFilters(lang=["pt", "xx"])]
)
def test_a_language_that_is_no_code_is_refused(ws: Workspace, filters: Any) -> None:
    assert "is not a language code" in _refusal(ws, filters)


@pytest.mark.parametrize(
    "filters",
    [{"setor": ""}, {"tags": [""]}, {"setor": ["ti", " "]}, _mf("orgao", "  "), {"ministro": ""}],
)
def test_a_blank_value_is_refused_on_every_path(ws: Workspace, filters: Any) -> None:
    assert "an empty value matches nothing" in _refusal(ws, filters)


def test_widening_keeps_what_has_no_language_test() -> None:
    from trilha.index.filters import sealed, widen_languages

    policy = sealed(FilterExpr(parts=[Condition(key="visibility", op="eq", value="public")]))
    asked = FilterExpr(parts=[policy, Condition(key="lang", op="eq", value="pt")])
    got = widen_languages(asked, lambda: ["en", "pt", "pt-BR", "pt-PT"])
    assert got.parts[0] is policy and policy.content_key is not None
    assert got.parts[1] == Condition(key="lang", op="in", value=["pt", "pt-BR", "pt-PT"])
    assert widen_languages(policy, lambda: ["pt-BR"]) is policy
    only_en = FilterExpr(parts=[Condition(key="lang", op="eq", value="en")])
    assert widen_languages(only_en, lambda: ["en", "pt-BR"]) == only_en


@pytest.mark.parametrize("field", ["data_inicio", "data_fim"])
def test_a_blank_date_is_refused_not_dropped(ws: Workspace, field: str) -> None:
    assert "an empty date matches nothing" in _refusal(ws, {field: ""})
