"""The one visibility policy (seed 004 REQ-RETR-009/011, seed 002 RBAC/ABAC and sensitivity).

:func:`visible` is the rule, written once as a pure function of an item's access fields and a
:class:`~trilha.access.principal.Principal`. An item is visible when its owner asks, or when all
of these hold:

* ``sensitivity <= principal.clearance`` and ``hierarchy_level <= principal.hierarchy_level``;
* its ACL is empty, or shares a role/group with the principal;
* its ``visibility`` admits the principal: ``public`` everyone, ``org`` members of ``org_id``,
  ``project`` members of ``project_id``, ``restricted`` whoever its (non-empty) ACL names,
  ``private`` nobody but the owner.

Anything unknown or missing fails closed. The indices never call :func:`visible` item by item:
:func:`visibility_filter` compiles the same rule into a :class:`~trilha.index.filters.FilterExpr`,
which the dense index turns into a Qdrant filter and the lexical index into a row mask, so the
rule runs inside each search, before any ``top_k`` cut; :mod:`trilha.access.cypher` turns it
into the WHERE fragment of every graph read. :mod:`trilha.access.compiled` does all of this once
per principal, not once per search. A property test holds the compiled forms to this
function.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from trilha.access.principal import Principal
from trilha.index.filters import Condition, FilterExpr
from trilha.types import OPEN_ACL

#: The unit payload keys the compiled policy reads.
ACCESS_KEYS = (
    "owner_id",
    "visibility",
    "org_id",
    "project_id",
    "acl",
    "sensitivity",
    "hierarchy_level",
)


class Access(BaseModel):
    """The access fields of an item (a unit, a document, a graph node)."""

    model_config = ConfigDict(frozen=True)

    visibility: str = Field("public", description="public, org, project, private, restricted.")
    sensitivity: int = Field(0, description="0 public … higher is more confidential.")
    hierarchy_level: int = Field(0, description="Minimum hierarchy level to see it.")
    owner_id: str | None = Field(None, description="The user who owns it; they always see it.")
    org_id: str | None = Field(None, description="Organisation of an 'org' item.")
    project_id: str | None = Field(None, description="Project of a 'project' item.")
    acl: Sequence[str] = Field((), description="Roles or groups allowed; empty: no ACL.")


def visible(item: Access, principal: Principal) -> bool:
    """Whether ``principal`` may see ``item`` (the module docstring states the rule)."""
    if principal.user_id is not None and item.owner_id == principal.user_id:
        return True
    if item.sensitivity > principal.clearance:
        return False
    if item.hierarchy_level > principal.hierarchy_level:
        return False
    acl = [a for a in item.acl if a != OPEN_ACL]
    if acl and not set(acl) & set(principal.roles):
        return False
    if item.visibility == "public":
        return True
    if item.visibility == "org":
        return item.org_id is not None and item.org_id in principal.org_ids
    if item.visibility == "project":
        return item.project_id is not None and item.project_id in principal.project_ids
    if item.visibility == "restricted":
        return bool(acl)
    return False


def _eq(key: str, value: str | int) -> Condition:
    return Condition(key=key, op="eq", value=value)


def _in(key: str, values: Sequence[str]) -> Condition:
    return Condition(key=key, op="in", value=list(values))


def visibility_filter(principal: Principal) -> FilterExpr:
    """The policy for ``principal`` as a filter on the unit payload (:data:`ACCESS_KEYS`).

    Only positive tests are used, so a unit lacking a field never passes through it. The ACL
    of a unit is stored as ``[OPEN_ACL]`` when it has none, so "no ACL, or a shared role" is
    one ``in`` test.
    """
    scopes: list[Condition | FilterExpr] = [_eq("visibility", "public")]
    if principal.org_ids:
        scopes.append(
            FilterExpr(parts=[_eq("visibility", "org"), _in("org_id", principal.org_ids)])
        )
    if principal.project_ids:
        scopes.append(
            FilterExpr(
                parts=[_eq("visibility", "project"), _in("project_id", principal.project_ids)]
            )
        )
    if principal.roles:
        scopes.append(
            FilterExpr(parts=[_eq("visibility", "restricted"), _in("acl", principal.roles)])
        )
    admitted = FilterExpr(
        parts=[
            Condition(key="sensitivity", op="lte", value=principal.clearance),
            Condition(key="hierarchy_level", op="lte", value=principal.hierarchy_level),
            _in("acl", [OPEN_ACL, *principal.roles]),
            FilterExpr(mode="or", parts=scopes),
        ]
    )
    if principal.user_id is None:
        return admitted
    return FilterExpr(mode="or", parts=[_eq("owner_id", principal.user_id), admitted])


def scope_key(principal: Principal) -> str:
    """A short key naming what ``principal`` may see: equal keys, equal visible sets. Caches
    keyed by query alone would leak across principals; key them by this too."""
    compiled = visibility_filter(principal).cache_key()
    return hashlib.sha256(compiled.encode()).hexdigest()[:16]
