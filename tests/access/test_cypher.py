"""The policy's Cypher form: parameters only, access keys only, fails closed on missing fields."""

from __future__ import annotations

import pytest

from trilha.access import OPEN_ACL, Principal
from trilha.access.cypher import CypherVisibility, visible_where
from trilha.errors import BadRequestError
from trilha.index.filters import Condition, FilterExpr

ANA = Principal(
    user_id="ana", org_ids=["acme"], project_ids=["atlas"], roles=["it"], hierarchy_level=2
)


def test_anonymous_fragment_reads_public_level_zero_only() -> None:
    text, params = visible_where(None, "d")
    assert text == (
        "(coalesce(d.owner_id = $vis_0, false) OR (coalesce(d.sensitivity <= $vis_1, false) AND "
        "coalesce(d.hierarchy_level <= $vis_2, false) AND any(vis_item IN coalesce(d.acl, []) "
        "WHERE vis_item IN $vis_3) AND (coalesce(d.visibility = $vis_4, false) OR "
        "(coalesce(d.visibility = $vis_5, false) AND coalesce(d.org_id IN $vis_6, false)) OR "
        "(coalesce(d.visibility = $vis_7, false) AND coalesce(d.project_id IN $vis_8, false)) OR "
        "(coalesce(d.visibility = $vis_9, false) AND any(vis_item IN coalesce(d.acl, []) "
        "WHERE vis_item IN $vis_10)))))"
    )
    assert params == {
        "vis_0": None, "vis_1": 0, "vis_2": 0, "vis_3": [OPEN_ACL], "vis_4": "public",
        "vis_5": "org", "vis_6": [], "vis_7": "project", "vis_8": [], "vis_9": "restricted",
        "vis_10": [],
    }  # fmt: skip


def test_every_principal_has_one_statement_text() -> None:
    """The graph server plans a text once: what differs between principals is parameters."""
    principals = [
        None,
        Principal(user_id="ana"),
        Principal(org_ids=["acme"], roles=["finance"], clearance=2, hierarchy_level=3),
        Principal(user_id="bo", project_ids=["atlas"]),
    ]
    assert len({visible_where(p, "n")[0] for p in principals}) == 1


def test_values_travel_as_parameters_never_in_the_text() -> None:
    hostile = Principal(
        user_id="x' OR true //", org_ids=["o}) RETURN 1 //"], roles=["r`; DETACH DELETE n"]
    )
    text, params = visible_where(hostile, "n")
    assert "OR true" not in text and "DETACH" not in text and "RETURN" not in text
    assert params["vis_0"] == "x' OR true //"  # the owner test comes first
    assert text.startswith("(coalesce(n.owner_id = $vis_0, false) OR ")
    assert {"o}) RETURN 1 //"} <= {v for p in params.values() for v in _flat(p)}


def _flat(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else [value]


def test_the_same_parameters_serve_every_variable() -> None:
    compiled = CypherVisibility.of(ANA)
    assert compiled.where("c").replace("c.", "d.") == compiled.where("d")
    assert compiled.params == visible_where(ANA, "zzz")[1]


@pytest.mark.parametrize("var", ["n.x", "n) MATCH (m", "", "1n", "n`"])
def test_only_plain_variables(var: str) -> None:
    with pytest.raises(BadRequestError, match="not a plain identifier"):
        visible_where(ANA, var)


def test_only_access_keys_compile() -> None:
    compiler = CypherVisibility.of(None)
    assert "title" not in compiler.template
    from trilha.access.cypher import _Compiler

    with pytest.raises(BadRequestError, match="'title' is not an access field"):
        _Compiler("p").expr(FilterExpr(parts=[Condition(key="title", op="eq", value="x")]))
    with pytest.raises(BadRequestError, match="does not apply to the list 'acl'"):
        _Compiler("p").expr(FilterExpr(parts=[Condition(key="acl", op="lte", value=1)]))


def test_every_operator_is_two_valued() -> None:
    from trilha.access.cypher import _Compiler

    compiler = _Compiler("p")
    parts: list[Condition | FilterExpr] = [
        Condition(key="org_id", op="ne", value="a"),
        Condition(key="org_id", op="nin", value=["a"]),
        Condition(key="acl", op="nin", value=["a"]),
        Condition(key="sensitivity", op="gt", value=1),
    ]
    text = compiler.expr(FilterExpr(mode="or", parts=parts, negate=True))
    assert text == (
        "(NOT (coalesce({v}.org_id <> $p_0, true) OR NOT coalesce({v}.org_id IN $p_1, false) OR "
        "NOT any(vis_item IN coalesce({v}.acl, []) WHERE vis_item IN $p_2) OR "
        "coalesce({v}.sensitivity > $p_3, false)))"
    )
    assert _Compiler("p").expr(FilterExpr(mode="or")) == "false"
