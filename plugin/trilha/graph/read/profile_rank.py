"""How profile hits are scored and explained: pure functions of a node's props.

    score = 1
          + w_terms     × (share of the query terms its title, name or text contains)
          + w_overdue   × (1 if it is overdue)
          + w_priority  × (1 if it is a priority)
          + w_recency   × 1 / (1 + days since updated_at, else created_at, / recency_days)
          + w_connected × (1 if the caller owns it, ½ if it is in one of the caller's orgs)

The last term is REQ-RETR-008's preference for what connects to the user or their startup.
Overdue and priority read as the walk's Cypher filters do
(:mod:`trilha.graph.read.profile_statements`), so a hit kept by a filter also earns its bonus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from trilha.access import Principal
from trilha.graph.read.profile_query import (
    CLOSED_STATUSES,
    HIGH_PRIORITIES,
    LATE_STATUSES,
    fold,
)
from trilha.graph.read.profile_results import ProfileLink


@dataclass(frozen=True)
class RankWeights:
    """The weights of the score (module docstring)."""

    terms: float = 1.0
    overdue: float = 0.5
    priority: float = 0.5
    recency: float = 0.25
    connected: float = 0.5
    recency_days: float = 30.0


#: The weights used unless a caller gives others.
DEFAULT_WEIGHTS = RankWeights()


def _text(props: Mapping[str, Any], key: str) -> str:
    value = props.get(key)
    return "" if value is None else str(value)


def term_overlap(props: Mapping[str, Any], terms: Sequence[str]) -> float:
    """Share of ``terms`` (folded, :func:`~trilha.graph.read.profile_query.fold`) that the
    node's folded title, name or text contains; 0 without terms."""
    if not terms:
        return 0.0
    text = fold(" ".join(_text(props, k) for k in ("title", "name", "text")))
    return sum(t in text for t in terms) / len(terms)


def status_of(props: Mapping[str, Any]) -> str:
    """The node's status, lower-cased ('' when none)."""
    return _text(props, "status").lower()


def is_overdue(props: Mapping[str, Any], today: date) -> bool:
    """A late status, or a due date before ``today`` on work that is not closed."""
    status = status_of(props)
    due = _text(props, "due_date")
    return status in LATE_STATUSES or (
        bool(due) and due < today.isoformat() and status not in CLOSED_STATUSES
    )


def is_priority(props: Mapping[str, Any]) -> bool:
    """``priority_node`` is true, or ``priority`` is one of the high ones."""
    return props.get("priority_node") is True or _text(props, "priority").lower() in (
        HIGH_PRIORITIES
    )


def _day(value: str) -> date | None:
    try:
        return datetime.fromisoformat(value.strip()).date()
    except ValueError:
        return None


def recency(props: Mapping[str, Any], today: date, days: float) -> float:
    """``1 / (1 + age / days)`` where age is the days since updated_at (else created_at); a
    future date counts as today; 0 without a readable date."""
    when = _day(_text(props, "updated_at") or _text(props, "created_at"))
    if when is None:
        return 0.0
    return 1.0 / (1.0 + max((today - when).days, 0) / days)


def connection(props: Mapping[str, Any], principal: Principal | None) -> float:
    """1 when the caller owns the node, 0.5 when it is in one of the caller's orgs, else 0."""
    if principal is None:
        return 0.0
    if principal.user_id is not None and props.get("owner_id") == principal.user_id:
        return 1.0
    return 0.5 if props.get("org_id") in principal.org_ids else 0.0


def score(
    props: Mapping[str, Any],
    terms: Sequence[str],
    today: date,
    principal: Principal | None,
    weights: RankWeights = DEFAULT_WEIGHTS,
) -> float:
    """The score of a hit (module docstring)."""
    return (
        1.0
        + weights.terms * term_overlap(props, terms)
        + weights.overdue * is_overdue(props, today)
        + weights.priority * is_priority(props)
        + weights.recency * recency(props, today, weights.recency_days)
        + weights.connected * connection(props, principal)
    )


def _first_out(links: Sequence[ProfileLink], rel_type: str) -> str | None:
    return next(
        (
            x.other_id
            for x in links
            if x.rel_type == rel_type and x.hops == 1 and x.direction == "out"
        ),
        None,
    )


def reason(label: str, props: Mapping[str, Any], links: Sequence[ProfileLink], today: date) -> str:
    """``'late priority Task of Project:p-lgpd'``: what it is, the first node it BELONGS_TO,
    the first aim it ALIGNS_WITH, and how many items align with it (one hop each)."""
    flags = (("late", is_overdue(props, today)), ("priority", is_priority(props)))
    parts = [" ".join([*(word for word, on in flags if on), label])]
    owner, aim = _first_out(links, "BELONGS_TO"), _first_out(links, "ALIGNS_WITH")
    parts += [f"of {owner}"] if owner else []
    parts += [f"aligned with {aim}"] if aim else []
    backing = sum(
        x.rel_type == "ALIGNS_WITH" and x.hops == 1 and x.direction == "in" for x in links
    )
    parts += [f"with {backing} aligned item{'s' if backing > 1 else ''}"] if backing else []
    return " ".join(parts)
