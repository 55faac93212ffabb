"""Cypher of the profile walks (seed 004 REQ-RETR-007, 021…025, 030): anchor scans with their
filters, the one-hop neighbours a walk expands through, and the claims a claim links to.

Builders take allow-listed labels / relationship types and filter names from :data:`FILTERS`
only; every value is a ``$parameter`` (:func:`filter_params`). Each filter is a two-valued
boolean over one node variable: a missing property reads as "no match" (scope, status, window,
priority) or as "no limit" (validity), never as null. Every statement embeds the caller's
visibility (:class:`~trilha.graph.visibility.Visibility`) before its ``LIMIT``. Only
``coalesce``, ``toLower``, ``toString``, ``replace``, ``reduce``, ``any``, ``IN``, ``CONTAINS``
and comparisons are used: FalkorDB and ArcadeDB (Bolt) run them alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from trilha.graph.model import check_label, check_rel_type
from trilha.graph.read.profile_query import (
    CLOSED_STATUSES,
    FOLD,
    HIGH_PRIORITIES,
    LATE_STATUSES,
    ProfileQuery,
    fold,
    iso_day,
    iso_instant,
    iso_next_day,
)
from trilha.graph.visibility import Visibility

#: Properties an anchor scan returns (those a node lacks come back null and are dropped).
ANCHOR_PROPS = (
    "id",
    "title",
    "name",
    "text",
    "status",
    "due_date",
    "priority",
    "priority_node",
    "owner_id",
    "org_id",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "expires_at",
    "confidence",
    "source_ref",
    "memory_class",
    "type",
    "visibility",
    "hierarchy_level",
)


def _status(v: str) -> str:
    return f"toLower(coalesce(toString({v}.status), ''))"


def _dated(v: str) -> str:
    return f"coalesce({v}.due_date, {v}.updated_at)"


#: Filter name → its Cypher over a node variable (parameters from :func:`filter_params`).
FILTERS: dict[str, Callable[[str], str]] = {
    "validity": lambda v: (
        f"coalesce({v}.valid_from < $f_next_day, true) AND "
        f"coalesce({v}.valid_to >= $f_today, true) AND coalesce({v}.expires_at > $f_now, true)"
    ),
    "scope": lambda v: (
        f"(coalesce({v}.owner_id IN $f_owners, false) OR coalesce({v}.org_id IN $f_orgs, false))"
    ),
    "status": lambda v: f"{_status(v)} IN $f_statuses",
    "overdue": lambda v: (
        f"({_status(v)} IN $f_late OR (coalesce({v}.due_date < $f_today, false) "
        f"AND NOT {_status(v)} IN $f_closed))"
    ),
    "due_from": lambda v: f"coalesce({_dated(v)} >= $f_due_from, false)",
    "due_to": lambda v: f"coalesce({_dated(v)} < $f_due_before, false)",
    "open": lambda v: f"NOT {_status(v)} IN $f_closed",
    "priority": lambda v: (
        f"(coalesce({v}.priority_node = true, false) OR "
        f"toLower(coalesce(toString({v}.priority), '')) IN $f_high)"
    ),
}


def query_filters(query: ProfileQuery, validity: bool) -> list[str]:
    """The :data:`FILTERS` ``query`` asks for (``validity`` when the profile requires it);
    the text filter is ``'terms'`` (it runs after them, on the folded text)."""
    wanted = {
        "validity": validity,
        "scope": bool(query.owner_ids or query.org_ids),
        "status": bool(query.statuses),
        "overdue": query.overdue,
        "due_from": query.due_from is not None,
        "due_to": query.due_to is not None,
        "priority": query.priority_only,
    }
    return [name for name, on in wanted.items() if on] + (["terms"] if query.terms else [])


def filter_params(query: ProfileQuery) -> dict[str, Any]:
    """The parameters of every filter (unused ones are harmless)."""
    return {
        "f_today": iso_day(query.today),
        "f_next_day": iso_next_day(query.today),
        "f_now": iso_instant(query.instant),
        "f_owners": list(query.owner_ids),
        "f_orgs": list(query.org_ids),
        "f_statuses": [s.lower() for s in query.statuses],
        "f_late": list(LATE_STATUSES),
        "f_closed": list(CLOSED_STATUSES),
        "f_due_from": iso_day(query.due_from) if query.due_from else "",
        "f_due_before": iso_next_day(query.due_to) if query.due_to else "",
        "f_high": list(HIGH_PRIORITIES),
        "f_terms": list(dict.fromkeys(fold(t) for t in query.terms)),
        "f_fold": [list(pair) for pair in FOLD],
    }


def folded(expr: str) -> str:
    """``expr`` (a string) lower-cased with :data:`FOLD`'s accents removed (``$f_fold``)."""
    return f"reduce(f_s = toLower({expr}), f_c IN $f_fold | replace(f_s, f_c[0], f_c[1]))"


def text_of(v: str) -> str:
    """The text an anchor's terms are matched in: its title, name and text."""
    return " + ' ' + ".join(f"coalesce(toString({v}.{k}), '')" for k in ("title", "name", "text"))


def _map(v: str, keys: Sequence[str]) -> str:
    return "{" + ", ".join(f"{k}: {v}.{k}" for k in keys) + "}"


def anchors(label: str, filters: Sequence[str], vis: Visibility) -> str:
    """``props`` (:data:`ANCHOR_PROPS`) of the ``label`` nodes ``vis`` sees that pass
    ``filters`` (names from :data:`FILTERS`, plus ``'terms'``: the folded title, name or text
    contains one of ``$f_terms``), most recently updated first, at most ``$scan``."""
    conditions = [vis.own("n"), *(FILTERS[f]("n") for f in filters if f != "terms")]
    # Two WITHs and a list, not any(): FalkorDB's any() in a WITH's WHERE does not see the
    # variables that WITH projects (it matches nothing).
    terms = (
        f"WITH n, {folded(text_of('n'))} AS f_txt "
        "WITH n, [t IN $f_terms WHERE f_txt CONTAINS t] AS f_hit WHERE size(f_hit) > 0 "
        if "terms" in filters
        else ""
    )
    return (
        f"MATCH (n:{check_label(label)}) WHERE {' AND '.join(conditions)} {terms}"
        f"RETURN {_map('n', ANCHOR_PROPS)} AS props, n.id AS id, "
        "coalesce(n.updated_at, n.created_at, '') AS recent ORDER BY recent DESC, id LIMIT $scan"
    )


def anchor_ids(label: str, filters: Sequence[str], vis: Visibility) -> str:
    """The ids of the ``label`` nodes in ``$f_ids`` (looked up on the id index) that ``vis``
    sees and that pass ``filters`` (``'terms'`` aside: the ids were chosen by it), in
    :func:`anchors`' order, at most ``$scan``."""
    conditions = [vis.own("n"), *(FILTERS[f]("n") for f in filters if f != "terms")]
    return (
        f"UNWIND $f_ids AS f_k MATCH (n:{check_label(label)} {{id: f_k}}) "
        f"WHERE {' AND '.join(conditions)} RETURN n.id AS id, "
        "coalesce(n.updated_at, n.created_at, '') AS recent ORDER BY recent DESC, id LIMIT $scan"
    )


def neighbours(label: str, rel_types: Sequence[str], validity: bool, vis: Visibility) -> str:
    """One hop from the ``label`` nodes in ``$ids`` over ``rel_types`` (either direction) to
    the nodes ``vis`` sees (a shared node next to a seen one is seen: the walk only leaves
    seen nodes), valid ones only with ``validity``: ``src``, the neighbour's ``label``, ``id``,
    ``title`` and ``status``, the edge's ``type`` and ``out`` (it leaves ``src``); at most
    ``$cap`` rows. RELATED is never walked here (:mod:`trilha.graph.read.path_search` does,
    with its support). ``WITH a`` starts the match from ``a``: for a label without an id
    index FalkorDB would otherwise start from a scan of every node (3 s instead of 9 ms for a
    strategy walk on a 46k-node graph).
    """
    types = "|".join(check_rel_type(t) for t in rel_types if t != "RELATED")
    valid = f" AND {FILTERS['validity']('b')}" if validity else ""
    return (
        f"UNWIND $ids AS k MATCH (a:{check_label(label)} {{id: k}}) "
        f"WITH a MATCH (a)-[r:{types}]-(b) WHERE {vis.node('b')}{valid} "
        "RETURN a.id AS src, labels(b)[0] AS label, b.id AS id, type(r) AS type, "
        "startNode(r) = a AS out, coalesce(b.title, b.name, b.text) AS title, "
        "b.status AS status LIMIT $cap"
    )


def claim_mentions() -> str:
    """The entities the Claims ``$ids`` MENTION (seen through their claim, which the caller
    has already been shown)."""
    return (
        "UNWIND $ids AS k MATCH (c:Claim {id: k})-[:MENTIONS]->(e:Entity) "
        "RETURN c.id AS claim, coalesce(e.name, e.id) AS name ORDER BY claim, name"
    )
