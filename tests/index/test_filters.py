"""One filter model, identical on both indices (property test against real Qdrant)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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

from trilha.errors import BadRequestError
from trilha.index.columns import MetaColumns
from trilha.index.dense import DenseIndex, open_dense_index
from trilha.index.filters import (
    Condition,
    FilterExpr,
    coerce_filters,
    from_metadata_filters,
    from_search_filters,
)
from trilha.types import SearchFilters, TextUnit

LANGS = ["en", "pt"]
TAGS = ["a", "b", "c", "d"]
N = 60


def _units() -> list[TextUnit]:
    rng = np.random.default_rng(7)
    units = []
    for i in range(N):
        tags = sorted({TAGS[int(j)] for j in rng.integers(0, 4, size=int(rng.integers(0, 3)))})
        units.append(
            TextUnit(
                unit_id=f"d{i % 20}#{i}",
                doc_id=f"d{i % 20}",
                text=f"t{i}",
                lang=LANGS[i % 2],
                tags=tags,
                sensitivity=int(i % 3),
                date=f"{2018 + i % 7}-0{1 + i % 9}-1{i % 9}",
            )
        )
    return units


@pytest.fixture(scope="module", params=["edge", "local"])
def dense(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[DenseIndex, list[TextUnit]]]:
    units = _units()
    index = open_dense_index(
        mode=request.param,
        path=tmp_path_factory.mktemp("q"),
        url=None,
        api_key=None,
        collection="t",
        dimension=8,
    )
    vectors = np.random.default_rng(1).standard_normal((N, 8)).astype(np.float32)
    index.upsert(units, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    yield index, units
    index.close()


conditions = st.one_of(
    st.builds(
        Condition,
        key=st.just("lang"),
        op=st.sampled_from(["eq", "ne"]),
        value=st.sampled_from(LANGS),
    ),
    st.builds(
        Condition,
        key=st.just("tags"),
        op=st.sampled_from(["eq", "ne"]),
        value=st.sampled_from(TAGS),
    ),
    st.builds(
        Condition,
        key=st.just("tags"),
        op=st.sampled_from(["in", "nin"]),
        value=st.lists(st.sampled_from(TAGS), min_size=1, max_size=3, unique=True),
    ),
    st.builds(
        Condition,
        key=st.just("date_num"),
        op=st.sampled_from(["gt", "gte", "lt", "lte"]),
        value=st.integers(20180101, 20250101),
    ),
    st.builds(
        Condition,
        key=st.just("sensitivity"),
        op=st.sampled_from(["lte", "eq"]),
        value=st.integers(0, 2),
    ),
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
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(expr=exprs)
def test_mask_and_qdrant_agree(dense: tuple[DenseIndex, list[TextUnit]], expr: FilterExpr) -> None:
    index, units = dense
    mask = MetaColumns([u.payload() for u in units]).mask(expr)
    assert mask is not None
    expected = {units[i].unit_id for i in np.flatnonzero(mask)}
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
