"""One filter model, identical on both indices (property tests against real Qdrant)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.vector_stores import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from tests.conftest import random_dense
from trilha.errors import BadRequestError
from trilha.index.columns import MetaColumns
from trilha.index.dense import DenseIndex, open_dense_index
from trilha.index.filter_input import coerce_filters, from_metadata_filters, from_search_filters
from trilha.index.filters import Condition, FilterExpr
from trilha.ingest.chunking import chunk_document
from trilha.ingest.loaders import SourceDocument
from trilha.testing.qdrant_server import QdrantTestServer
from trilha.types import SearchFilters, TextUnit

LANGS = ["en", "pt"]
TAGS = ["a", "b", "c", "d"]
#: Judges as the source documents spell them; ingest decides how they are stored.
MINISTROS = ["Fux", "fux", "Cármen Lúcia", "MENDES", None]
#: Spellings a filter may use (the last one matches nobody).
ASKED_MINISTROS = ["fux", "FUX", "Fux", "cármen lúcia", "CÁRMEN LÚCIA", "Mendes", "barroso"]
#: A domain field whose values mix numbers, numeric strings, a list and a bool.
MIXED = [1, 1.0, 2, "1", "x", 2.5, ["1", "y"], True, None]
ASKED_MIXED: list[str | int | float] = [1, 1.0, 2, "1", "x", 2.5, "y", 0]
N = 60


def _meta(i: int, rng: np.random.Generator) -> dict[str, object]:
    meta: dict[str, object] = {
        "lang": LANGS[i % 2],
        "tags": sorted({TAGS[int(j)] for j in rng.integers(0, 4, size=int(rng.integers(0, 3)))}),
        "sensitivity": int(i % 3),
        "date": f"{2018 + i % 7}-0{1 + i % 9}-1{i % 9}",
    }
    for key, values in (("ministro", MINISTROS), ("v", MIXED)):
        if values[i % len(values)] is not None:
            meta[key] = values[i % len(values)]
    return meta


def _units() -> list[TextUnit]:
    """N one-unit documents, made by the ingest path so stored values follow its rules."""
    rng = np.random.default_rng(7)
    docs = [
        SourceDocument(doc_id=f"d{i}", text=f"t{i}", source_type="text", meta=_meta(i, rng))
        for i in range(N)
    ]
    return [u for d in docs for u in chunk_document(d)]


@pytest.fixture(scope="module", params=["edge", "local", "server"])
def dense(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[DenseIndex, list[TextUnit]]]:
    """The units in each backend; ``server`` is qdrant-client's REST client talking to a
    stand-in server (:mod:`trilha.testing.qdrant_server`)."""
    units = _units()
    with QdrantTestServer() as qdrant:
        url = qdrant.url if request.param == "server" else None
        index = random_dense(request.param, tmp_path_factory.mktemp("q"), units, url)
        yield index, units
        index.close()


def _keyword(key: str, values: Sequence[object]) -> st.SearchStrategy[Condition]:
    """Conditions on ``key``: eq/ne one of ``values``, in/nin a few of them."""
    return st.one_of(
        st.builds(
            Condition,
            key=st.just(key),
            op=st.sampled_from(["eq", "ne"]),
            value=st.sampled_from(values),
        ),
        st.builds(
            Condition,
            key=st.just(key),
            op=st.sampled_from(["in", "nin"]),
            value=st.lists(st.sampled_from(values), min_size=1, max_size=3),
        ),
    )


def _range(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Condition]:
    return st.builds(
        Condition, key=st.just(key), op=st.sampled_from(["gt", "gte", "lt", "lte"]), value=values
    )


conditions = st.one_of(
    _keyword("lang", LANGS),
    _keyword("tags", TAGS),
    _keyword("sensitivity", [0, 1, 2]),
    _keyword("ministro", ASKED_MINISTROS),
    _keyword("v", ASKED_MIXED),
    _range("date_num", st.integers(20180101, 20250101)),
    _range("sensitivity", st.integers(0, 2)),
    _range("v", st.sampled_from([1, 1.5, 2])),
)
exprs = st.recursive(
    st.builds(
        FilterExpr,
        mode=st.sampled_from(["and", "or"]),
        parts=st.lists(conditions, min_size=1, max_size=3),
        negate=st.booleans(),
    ),
    lambda inner: st.builds(
        FilterExpr,
        mode=st.sampled_from(["and", "or"]),
        parts=st.lists(st.one_of(conditions, inner), min_size=1, max_size=3),
        negate=st.booleans(),
    ),
    max_leaves=6,
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(expr=exprs)
def test_mask_and_qdrant_agree(dense: tuple[DenseIndex, list[TextUnit]], expr: FilterExpr) -> None:
    index, units = dense
    mask = MetaColumns([u.payload() for u in units]).mask(expr)
    assert mask is not None
    expected = {units[i].unit_id for i in np.flatnonzero(mask)}
    got = {uid for uid, _ in index.search(np.ones(8, dtype=np.float32) / 8**0.5, N, expr)}
    assert got == expected


def _ministro(unit: TextUnit) -> str | None:
    value = unit.extra.get("ministro")
    return value.lower() if isinstance(value, str) else None


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    asked=st.lists(st.sampled_from(ASKED_MINISTROS), min_size=1, max_size=3, unique=True),
    op=st.sampled_from(["eq", "ne", "in", "nin"]),
    build=st.sampled_from(["metadata", "search_filters", "condition"]),
)
def test_ministro_ignores_case_on_every_path_and_side(
    dense: tuple[DenseIndex, list[TextUnit]], asked: list[str], op: str, build: str
) -> None:
    index, units = dense
    one = op in ("eq", "ne")
    value: str | list[str] = asked[0] if one else asked
    if build == "search_filters":
        if op != "eq":
            return  # SearchFilters.ministro is one value, matched with eq
        expr = from_search_filters(SearchFilters(ministro=asked[0]))
    elif build == "metadata":
        operator = {"eq": "==", "ne": "!=", "in": "in", "nin": "nin"}[op]
        expr = from_metadata_filters(
            MetadataFilters(
                filters=[MetadataFilter(key="ministro", value=value, operator=operator)]
            )
        )
    else:
        expr = FilterExpr(parts=[Condition(key="ministro", op=op, value=value)])  # type: ignore[arg-type]
    wanted = {a.lower() for a in (asked[:1] if one else asked)}
    hit = {u.unit_id for u in units if _ministro(u) in wanted}
    expected = hit if op in ("eq", "in") else {u.unit_id for u in units} - hit
    mask = MetaColumns([u.payload() for u in units]).mask(expr)
    assert mask is not None
    assert {units[i].unit_id for i in np.flatnonzero(mask)} == expected
    got = {uid for uid, _ in index.search(np.ones(8, dtype=np.float32) / 8**0.5, N, expr)}
    assert got == expected


def test_search_filters_translate_every_seed_field() -> None:
    expr = from_search_filters(
        SearchFilters(
            tags=["x"],
            lang="pt",
            setor=["RH", "TI"],
            ministro="silva",
            data_inicio="20200101",
            data_fim="2021-12-31",
            tipos_recurso=["REsp"],
            resultado="provido",
            max_sensitivity=1,
        )
    )
    got = {(c.key, c.op, str(c.value)) for c in expr.parts if isinstance(c, Condition)}
    assert got == {
        ("tags", "in", "['x']"),
        ("lang", "eq", "pt"),
        ("setor", "in", "['RH', 'TI']"),
        ("ministro", "eq", "SILVA"),
        ("date_num", "gte", "20200101"),
        ("date_num", "lte", "20211231"),
        ("tipo_recurso", "in", "['REsp']"),
        ("resultado", "eq", "provido"),
        ("sensitivity", "lte", "1"),
    }


def test_metadata_filters_nested_and_dates() -> None:
    mf = MetadataFilters(
        filters=[
            MetadataFilter(key="lang", value="pt"),
            MetadataFilters(
                filters=[
                    MetadataFilter(key="tags", value=["a", "b"], operator=FilterOperator.ANY),
                    MetadataFilter(key="date", value="2021-05-01", operator=FilterOperator.GTE),
                ],
                condition=FilterCondition.OR,
            ),
        ]
    )
    expr = from_metadata_filters(mf)
    assert expr.mode == "and"
    inner = expr.parts[1]
    assert isinstance(inner, FilterExpr) and inner.mode == "or"
    assert inner.parts[1] == Condition(key="date_num", op="gte", value=20210501)


@pytest.mark.parametrize(
    "bad",
    [
        MetadataFilters(
            filters=[MetadataFilter(key="text", value="x", operator=FilterOperator.TEXT_MATCH)]
        ),
        MetadataFilters(filters=[MetadataFilter(key="tags", value=[], operator=FilterOperator.IN)]),
        MetadataFilters(
            filters=[MetadataFilter(key="date", value="yesterday", operator=FilterOperator.GT)]
        ),
    ],
)
def test_unsupported_metadata_filters_are_clear_errors(bad: MetadataFilters) -> None:
    with pytest.raises(BadRequestError):
        from_metadata_filters(bad)


@pytest.mark.parametrize(
    "bad",
    [
        {"lang": 3},
        {"data_inicio": "2020-13-01"},
        {"unknown": "x"},
        {"data_inicio": "20220101", "data_fim": "20210101"},
        42,
    ],
)
def test_bad_filter_dicts_are_clear_errors(bad: object) -> None:
    with pytest.raises(BadRequestError):
        coerce_filters(bad)


def test_dense_index_path_roundtrip(tmp_path: Path) -> None:
    units = _units()[:5]
    index = open_dense_index(
        mode="edge", path=tmp_path, url=None, api_key=None, collection="t", dimension=8
    )
    vecs = np.eye(8, dtype=np.float32)[:5]
    index.upsert(units, vecs)
    index.close()
    reopened = open_dense_index(
        mode="edge", path=tmp_path, url=None, api_key=None, collection="t", dimension=8
    )
    assert reopened.count() == 5
    assert reopened.search(vecs[2], 1)[0][0] == units[2].unit_id
    reopened.delete_doc(units[2].doc_id)
    assert units[2].unit_id not in {u for u, _ in reopened.search(vecs[2], 5)}
    reopened.close()


@pytest.mark.parametrize(
    ("value", "stored"),
    [(1, {0, 1}), (1.0, {0, 1}), ("1", {3, 6}), (2.5, {5}), ("y", {6}), (0, set())],
)
def test_numbers_match_by_value_and_never_as_strings(
    dense: tuple[DenseIndex, list[TextUnit]], value: str | float, stored: set[int]
) -> None:
    index, units = dense
    expr = FilterExpr(parts=[Condition(key="v", op="eq", value=value)])
    expected = {u.unit_id for i, u in enumerate(units) if i % len(MIXED) in stored}
    mask = MetaColumns([u.payload() for u in units]).mask(expr)
    assert mask is not None
    assert {units[i].unit_id for i in np.flatnonzero(mask)} == expected
    got = {uid for uid, _ in index.search(np.ones(8, dtype=np.float32) / 8**0.5, N, expr)}
    assert got == expected
