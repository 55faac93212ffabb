"""The visibility policy: the pure rule, its compiled filter on both index forms, unit checks."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import random_dense
from trilha.access import Access, Principal, scope_key, visibility_filter, visible
from trilha.errors import BadRequestError
from trilha.index.columns import MetaColumns
from trilha.index.dense import DenseIndex
from trilha.index.filters import Condition, FilterExpr, combine
from trilha.ingest.chunking import chunk_document
from trilha.ingest.loaders import SourceDocument
from trilha.types import TextUnit

USERS = ["ana", "bia", "caio"]
ORGS = ["acme", "beta"]
PROJECTS = ["atlas", "zeus"]
ROLES = ["board", "it", "finance"]
N = 160


def test_the_rule_case_by_case() -> None:
    ana = Principal(user_id="ana", org_ids=["acme"], roles=["it"], hierarchy_level=2, clearance=1)
    anon = Principal.anonymous()
    cases = [
        (Access(), True, True),
        (Access(sensitivity=1), True, False),  # anonymous has clearance 0
        (Access(sensitivity=2), False, False),
        (Access(hierarchy_level=3), False, False),
        (Access(visibility="org", org_id="acme"), True, False),
        (Access(visibility="org", org_id="beta"), False, False),
        (Access(visibility="project", project_id="atlas"), False, False),
        (Access(visibility="private", owner_id="bia"), False, False),
        (Access(visibility="private", owner_id="ana", sensitivity=5), True, False),  # owner
        (Access(visibility="restricted", acl=["it"]), True, False),
        (Access(visibility="restricted", acl=["board"]), False, False),
        (Access(acl=["board"]), False, False),  # an ACL narrows even a public item
        (Access(visibility="team"), False, False),  # unknown values fail closed
    ]
    for item, for_ana, for_anon in cases:
        assert visible(item, ana) is for_ana, item
        assert visible(item, anon) is for_anon, item


def test_no_principal_is_anonymous_and_keys_follow_what_is_seen() -> None:
    assert Principal().is_anonymous and Principal.anonymous().describe().startswith("anonymous")
    a = Principal(user_id="ana", org_ids=["b", "a"], roles=["x"])
    same = Principal(user_id="ana", org_ids=["a", "b", "a"], roles=["x"])
    assert a == same and scope_key(a) == scope_key(same)
    assert scope_key(a) != scope_key(Principal(user_id="ana", org_ids=["a"], roles=["x"]))
    assert scope_key(a) != scope_key(Principal.anonymous())


@pytest.mark.parametrize(
    "fields",
    [{"roles": ["*"]}, {"org_ids": [""]}, {"user_id": " "}, {"clearance": -1}, {"admin": True}],
)
def test_bad_principals_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Principal.model_validate(fields)


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"visibility": "team"}, "visibility 'team' is not one of"),
        ({"visibility": "org"}, "visibility 'org' needs org_id"),
        ({"visibility": "project"}, "visibility 'project' needs project_id"),
        ({"visibility": "private"}, "visibility 'private' needs owner_id"),
        ({"visibility": "restricted"}, "visibility 'restricted' needs acl"),
        ({"acl": ["*"]}, "acl has an invalid role '*'"),
        ({"sensitivity": -1}, "sensitivity"),
    ],
)
def test_access_fields_are_checked_at_ingest(meta: dict[str, object], message: str) -> None:
    doc = SourceDocument(doc_id="d", text="t", source_type="text", meta=meta)
    with pytest.raises(BadRequestError, match=message):
        chunk_document(doc)


def test_workspace_defaults_apply_only_where_a_document_says_nothing() -> None:
    defaults = {"visibility": "org", "org_id": "acme", "sensitivity": 1}
    plain = chunk_document(SourceDocument(doc_id="a", text="t", source_type="text"), 180, defaults)
    own = SourceDocument(doc_id="b", text="t", source_type="text", meta={"visibility": "public"})
    (u,), (v,) = plain, chunk_document(own, 180, defaults)
    assert (u.visibility, u.org_id, u.sensitivity) == ("org", "acme", 1)
    assert (v.visibility, v.org_id, v.sensitivity) == ("public", "acme", 1)


def test_extra_fields_cannot_shadow_access_fields() -> None:
    with pytest.raises(ValueError, match="repeats the unit field"):
        TextUnit(
            unit_id="d#0",
            doc_id="d",
            text="t",
            visibility="private",
            owner_id="x",
            extra={"visibility": "public"},
        )


# -- the compiled forms agree with the rule ------------------------------------------------------
def _meta(rng: np.random.Generator) -> dict[str, object]:
    """Random but valid access metadata (the ingest path refuses invalid combinations)."""
    vis = str(rng.choice(["public", "org", "project", "private", "restricted"]))
    meta: dict[str, object] = {
        "visibility": vis,
        "sensitivity": int(rng.integers(0, 4)),
        "hierarchy_level": int(rng.integers(0, 4)),
        "lang": str(rng.choice(["en", "pt"])),
    }
    if vis == "private" or rng.random() < 0.4:
        meta["owner_id"] = str(rng.choice(USERS))
    if vis == "org" or rng.random() < 0.3:
        meta["org_id"] = str(rng.choice(ORGS))
    if vis == "project" or rng.random() < 0.3:
        meta["project_id"] = str(rng.choice(PROJECTS))
    if vis == "restricted" or rng.random() < 0.2:
        meta["acl"] = sorted({str(r) for r in rng.choice(ROLES, size=int(rng.integers(1, 3)))})
    return meta


def access_units(n: int = N, seed: int = 11) -> list[TextUnit]:
    rng = np.random.default_rng(seed)
    docs = [
        SourceDocument(doc_id=f"d{i}", text=f"t{i}", source_type="text", meta=_meta(rng))
        for i in range(n)
    ]
    return [u for d in docs for u in chunk_document(d)]


def access_of(unit: TextUnit) -> Access:
    return Access.model_validate(unit.model_dump())


principals = st.builds(
    Principal,
    user_id=st.one_of(st.none(), st.sampled_from(USERS)),
    org_ids=st.lists(st.sampled_from(ORGS), max_size=2),
    project_ids=st.lists(st.sampled_from(PROJECTS), max_size=2),
    roles=st.lists(st.sampled_from(ROLES), max_size=2),
    hierarchy_level=st.integers(0, 4),
    clearance=st.integers(0, 4),
)
user_filters = st.one_of(
    st.none(),
    st.builds(
        FilterExpr,
        parts=st.lists(
            st.one_of(
                st.builds(
                    Condition,
                    key=st.just("lang"),
                    op=st.sampled_from(["eq", "ne"]),
                    value=st.sampled_from(["en", "pt"]),
                ),
                st.builds(
                    Condition, key=st.just("visibility"), op=st.just("nin"), value=st.just(["org"])
                ),
            ),
            min_size=1,
            max_size=2,
        ),
    ),
)


@pytest.fixture(scope="module", params=["edge", "local"])
def dense(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[DenseIndex, list[TextUnit]]]:
    units = access_units()
    index = random_dense(request.param, tmp_path_factory.mktemp("q"), units)
    yield index, units
    index.close()


def _matches(unit: TextUnit, flt: FilterExpr | None) -> bool:
    if flt is None:
        return True
    mask = MetaColumns([unit.payload()]).mask(flt)
    return mask is None or bool(mask[0])


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(principal=principals, flt=user_filters)
def test_compiled_policy_equals_the_rule_in_both_indices(
    dense: tuple[DenseIndex, list[TextUnit]], principal: Principal, flt: FilterExpr | None
) -> None:
    """80 principals x 160 units x 2 Qdrant backends, plus the BM25 mask: 25,600+ decisions."""
    index, units = dense
    expected = {u.unit_id for u in units if visible(access_of(u), principal) and _matches(u, flt)}
    expr = combine(visibility_filter(principal), flt)
    mask = MetaColumns([u.payload() for u in units]).mask(expr)
    assert mask is not None
    assert {units[i].unit_id for i in np.flatnonzero(mask)} == expected
    query = np.ones(8, dtype=np.float32) / 8**0.5
    assert {uid for uid, _ in index.search(query, len(units), expr)} == expected


@pytest.mark.parametrize("field", ["hierarchy_level", "clearance"])
def test_a_principal_level_is_not_true_or_false(field: str) -> None:
    with pytest.raises(ValueError, match="True is not a level; give a non-negative integer"):
        Principal.model_validate({field: True})
    assert getattr(Principal.model_validate({field: 2}), field) == 2
