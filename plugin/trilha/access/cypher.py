"""The visibility policy as a Cypher boolean over one node: the WHERE fragment of graph reads.

:func:`visible_where` compiles :func:`~trilha.access.policy.visibility_filter`'s rule (the
rule the lexical and dense indices run, here in one shape for every principal:
:func:`uniform_filter`) into Cypher over a node variable. Values travel as parameters
(``$vis_0``, ``$vis_1``...); only the keys of :data:`~trilha.access.policy.ACCESS_KEYS` and
the variable name are written into the text. The
parameter names depend on the principal alone, so the fragments of two variables in one
statement share them.

Every test is two-valued: a comparison with a missing property is null in Cypher, so each one
is wrapped in ``coalesce(..., false)`` and a node lacking a field fails closed, even under NOT.
``acl`` is a list property: ``eq`` means "contains", ``in`` "contains any"
(``any(vis_item IN coalesce(n.acl, []) WHERE vis_item IN $p)``). The fragment uses only
``coalesce``, ``IN``, comparisons and ``any()``, which FalkorDB, Neo4j 5 and ArcadeDB (Bolt) run
alike.

The same rule can read the access fields from elsewhere than a node's properties: an
:data:`Accessor` gives the Cypher value of each key (the graph's access summaries read entry
``i`` of list properties, :mod:`trilha.graph.support`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trilha.access.policy import ACCESS_KEYS
from trilha.access.principal import Principal
from trilha.errors import BadRequestError
from trilha.index.filters import Condition, FilterExpr, Op
from trilha.types import OPEN_ACL

#: Access keys stored as lists on nodes.
LIST_KEYS = frozenset({"acl"})
_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The Cypher value of an access key over ``{v}``: a node's property by default.
Accessor = Callable[[str], str]
_SCALAR = {
    "eq": "coalesce({x} = {p}, false)",
    "in": "coalesce({x} IN {p}, false)",
    "ne": "coalesce({x} <> {p}, true)",
    "nin": "NOT coalesce({x} IN {p}, false)",
    "gt": "coalesce({x} > {p}, false)",
    "gte": "coalesce({x} >= {p}, false)",
    "lt": "coalesce({x} < {p}, false)",
    "lte": "coalesce({x} <= {p}, false)",
}
_ANY = "any(vis_item IN coalesce({x}, []) WHERE vis_item {test})"
_LIST = {
    "eq": _ANY.replace("{test}", "= {p}"),
    "in": _ANY.replace("{test}", "IN {p}"),
    "ne": "NOT " + _ANY.replace("{test}", "= {p}"),
    "nin": "NOT " + _ANY.replace("{test}", "IN {p}"),
}


def node_property(key: str) -> str:
    """The default :data:`Accessor`: property ``key`` of node ``{v}``."""
    return "{v}." + key


@dataclass
class _Compiler:
    """Turns a FilterExpr into a template over ``{v}`` and its parameters; ``access`` says how
    a key's value is read (a missing value must read as null)."""

    prefix: str
    params: dict[str, Any] = field(default_factory=dict)
    access: Accessor = node_property

    def condition(self, cond: Condition) -> str:
        if cond.key not in ACCESS_KEYS:
            raise BadRequestError(f"{cond.key!r} is not an access field ({', '.join(ACCESS_KEYS)})")
        table = _LIST if cond.key in LIST_KEYS else _SCALAR
        if cond.op not in table:
            raise BadRequestError(f"operator {cond.op!r} does not apply to the list {cond.key!r}")
        name = f"{self.prefix}_{len(self.params)}"
        self.params[name] = cond.value
        return table[cond.op].format(x=self.access(cond.key), p=f"${name}")

    def expr(self, expr: FilterExpr) -> str:
        parts = [
            self.condition(p) if isinstance(p, Condition) else self.expr(p) for p in expr.parts
        ]
        if not parts:
            body = "true" if expr.mode == "and" else "false"
        else:
            body = "(" + f" {expr.mode.upper()} ".join(parts) + ")"
        return f"(NOT {body})" if expr.negate else body


@dataclass(frozen=True)
class CypherVisibility:
    """One principal's rule compiled once: a template over the node variable, its parameters."""

    template: str
    params: dict[str, Any]

    @classmethod
    def of(
        cls, principal: Principal | None, prefix: str = "vis", access: Accessor = node_property
    ) -> CypherVisibility:
        """The compiled rule of ``principal`` (None: anonymous), reading each access key with
        ``access`` (a node's properties by default). The parameters depend on ``principal``
        and ``prefix`` alone, so two accessors compile to fragments that share them."""
        if not _VAR.match(prefix):
            raise BadRequestError(f"parameter prefix {prefix!r} is not a plain identifier")
        compiler = _Compiler(prefix, access=access)
        who = principal or Principal.anonymous()
        template = compiler.expr(uniform_filter(who))
        return cls(template=template, params=compiler.params)

    def where(self, var: str) -> str:
        """The fragment over variable ``var`` (a plain identifier)."""
        if not _VAR.match(var):
            raise BadRequestError(f"Cypher variable {var!r} is not a plain identifier")
        return self.template.replace("{v}", var)


def uniform_filter(principal: Principal) -> FilterExpr:
    """:func:`~trilha.access.policy.visibility_filter`'s rule in one shape for every principal.

    The policy leaves out the scopes a principal has nothing for (no org, no project, no role,
    no user id), so its Cypher text would vary with the principal, and a graph server plans each
    text anew (FalkorDB takes seconds to plan some of the graph reads). Here every scope is
    written, and one the principal lacks tests against an empty list (``x IN []``) or a null
    owner (``x = null``), both false: the same nodes pass, and every principal's statements are
    one text, planned once.
    """
    roles = list(principal.roles)

    def test(key: str, op: Op, value: Any) -> Condition:
        if value is None or value == []:  # no node passes; skip the model's non-empty check
            return Condition.model_construct(key=key, op=op, value=value)
        return Condition(key=key, op=op, value=value)

    def scope(kind: str, key: str, values: list[str]) -> FilterExpr:
        return FilterExpr(parts=[test("visibility", "eq", kind), test(key, "in", values)])

    scopes: list[Condition | FilterExpr] = [
        test("visibility", "eq", "public"),
        scope("org", "org_id", list(principal.org_ids)),
        scope("project", "project_id", list(principal.project_ids)),
        scope("restricted", "acl", roles),
    ]
    admitted = FilterExpr(
        parts=[
            test("sensitivity", "lte", principal.clearance),
            test("hierarchy_level", "lte", principal.hierarchy_level),
            test("acl", "in", [OPEN_ACL, *roles]),
            FilterExpr(mode="or", parts=scopes),
        ]
    )
    return FilterExpr(mode="or", parts=[test("owner_id", "eq", principal.user_id), admitted])


def visible_where(principal: Principal | None, var: str) -> tuple[str, dict[str, Any]]:
    """``(fragment, params)``: a Cypher boolean true exactly when ``principal`` (None:
    anonymous) may see node ``var``; pass ``params`` with the statement."""
    compiled = CypherVisibility.of(principal)
    return compiled.where(var), dict(compiled.params)
