"""What a profile walk looks for (:class:`ProfileQuery`) and how the store reads it: the
Cypher of the profile walks (seed 004 REQ-RETR-007, 021…025, 030), and the anchor texts that
answer its terms filter without a scan (:class:`AnchorTexts`).

Terms match case- and accent-insensitively: the text and the terms are lower-cased, then every
character of :data:`FOLD` is replaced by its base letter, in Python (:func:`fold`) and in Cypher
(:func:`folded`) by the same table, so both sides agree.

Statement builders take allow-listed labels / relationship types and filter names from
:data:`FILTERS` only; every value is a ``$parameter`` (:func:`filter_params`). Each filter is a
two-valued boolean over one node variable: a missing property reads as "no match" (scope,
status, window, priority) or as "no limit" (validity), never as null. Every statement embeds the
caller's visibility (:class:`~trilha.graph.visibility.Visibility`) before its ``LIMIT``. Only
``coalesce``, ``toLower``, ``toString``, ``replace``, ``reduce``, ``any``, ``IN``, ``CONTAINS``
and comparisons are used: FalkorDB and ArcadeDB (Bolt) run them alike.

Anchor texts: the terms filter folds the title, name and text of every node of a label in Cypher
(:func:`folded`: one ``replace`` per accented letter), and the scan returns the props of every
match, up to half of ``max_nodes_scanned``: most of a walk's time on a corpus of thousands of
documents. :class:`AnchorTexts` keeps a copy of every node of a label per graph generation
(:class:`~trilha.graph.read.cache.GraphMemo`): the texts that filter folds, lower-cased by the
store (``toLower``, as the filter does), then folded with the same table in Python
(``str.translate`` replaces each accented letter by its base letter, as the chain of ``replace``
calls does), so :meth:`AnchorTexts.candidates` names exactly the nodes the terms filter passes.
The scan then asks the store which of those ids pass the caller's visibility and the other
filters (:func:`anchor_ids`) and takes their props from here. Nothing there belongs to a
principal: every id used has passed the caller's visibility in the store, at the time of the
call. A label is not narrowed (:meth:`AnchorTexts.candidates` is None) when a node has no string
id, two share one, a text holds a NUL, it has more than :data:`MAX_NODES` nodes, or the memory
mirrors write it (:data:`UNCOUNTED`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trilha.graph.model import check_label, check_rel_type
from trilha.graph.read.cache import GraphMemo, memo_key
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility

#: Lower-case accented letters and their base letter (Portuguese, Spanish, French, German).
FOLD: tuple[tuple[str, str], ...] = tuple(
    (accented, base)
    for base, letters in (
        ("a", "áàâãäå"),
        ("e", "éèêë"),
        ("i", "íìîï"),
        ("o", "óòôõö"),
        ("u", "úùûü"),
        ("c", "ç"),
        ("n", "ñ"),
        ("y", "ýÿ"),
    )
    for accented in letters
)
_FOLD = str.maketrans(dict(FOLD))

#: Statuses that mean "late" whatever the due date.
LATE_STATUSES = ("late", "overdue", "atrasada", "atrasado", "atrasadas", "atrasados")
#: Statuses of finished work: never overdue, never open.
CLOSED_STATUSES = (
    "done",
    "closed",
    "cancelled",
    "canceled",
    "concluída",
    "concluida",
    "concluído",
    "concluido",
    "cancelada",
    "cancelado",
    "fechada",
    "fechado",
    "feito",
    "feita",
)
#: ``priority`` values that make an item a priority.
HIGH_PRIORITIES = ("high", "critical", "urgent", "alta", "crítica", "critica", "urgente")

MAX_TERMS = 50
MAX_TERM_CHARS = 300


def fold(text: str) -> str:
    """``text`` lower-cased with the accents of :data:`FOLD` removed."""
    return text.lower().translate(_FOLD)


def _words(values: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Stripped, non-empty, distinct; NUL refused; at most :data:`MAX_TERMS` of them."""
    out: dict[str, None] = {}
    for v in values:
        if "\x00" in v:
            raise ValueError(f"{what} must not contain NUL characters")
        if len(v) > MAX_TERM_CHARS:
            raise ValueError(f"{what} are at most {MAX_TERM_CHARS} characters each")
        if v.strip():
            out[v.strip()] = None
    if len(out) > MAX_TERMS:
        raise ValueError(f"at most {MAX_TERMS} {what}, got {len(out)}")
    return tuple(out)


class ProfileQuery(BaseModel):
    """Which anchors a profile walk keeps. Every filter left empty does not filter."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    today: date = Field(description="The day overdue, windows and validity are judged on.")
    now: datetime | None = Field(
        None, description="The instant ``expires_at`` is judged on (default: start of today, UTC)."
    )
    labels: tuple[str, ...] = Field(
        (), description="Anchor labels to start from, among the profile's; empty: all of them."
    )
    terms: tuple[str, ...] = Field(
        (), description="Keywords: an anchor's title, name or text contains any of them."
    )
    owner_ids: tuple[str, ...] = Field((), description="Keep anchors whose owner_id is one.")
    org_ids: tuple[str, ...] = Field(
        (), description="Keep anchors whose org_id is one (with owner_ids: either matches)."
    )
    statuses: tuple[str, ...] = Field((), description="Keep anchors with one of these statuses.")
    overdue: bool = Field(
        False, description="Keep late anchors: a late status, or due before today and not closed."
    )
    due_from: date | None = Field(
        None, description="Keep anchors dated (due_date, else updated_at) on or after this day."
    )
    due_to: date | None = Field(
        None, description="Keep anchors dated (due_date, else updated_at) on or before this day."
    )
    priority_only: bool = Field(
        False, description="Keep priority_node anchors and those of a high priority."
    )

    @field_validator("terms", "owner_ids", "org_ids", "statuses")
    @classmethod
    def _clean(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _words(value, "values")

    @property
    def instant(self) -> datetime:
        """:attr:`now`, else the start of :attr:`today` in UTC."""
        return self.now or datetime.combine(self.today, time(), tzinfo=UTC)


def iso_day(day: date) -> str:
    """``'YYYY-MM-DD'``."""
    return day.isoformat()


def iso_next_day(day: date) -> str:
    """The day after ``day``: an ISO date or timestamp is on or before ``day`` exactly when it
    sorts before this string."""
    return (day + timedelta(days=1)).isoformat()


def iso_instant(moment: datetime) -> str:
    """``moment`` in UTC as ``'YYYY-MM-DDTHH:MM:SS'`` (naive: taken as UTC), which sorts against
    stored ISO timestamps as time does."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment
    return utc.strftime("%Y-%m-%dT%H:%M:%S")


# --- The Cypher: anchor scans, their filters, one-hop neighbours, claim mentions ------------------

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


# --- Anchor texts: the terms filter answered from memory ------------------------------------------

#: Labels the memory mirrors write straight into the store, without a new generation.
UNCOUNTED = frozenset({"Memory", "RetrievalJob"})
#: Largest label kept in memory.
MAX_NODES = 200_000
#: Between two texts (never in a term: terms refuse NUL).
_SEP = "\x00"


def texts_statement(label: str) -> str:
    """Every ``label`` node's anchor props (:data:`ANCHOR_PROPS`) and lower-cased text (title,
    name and text, as the terms filter reads them), at most :data:`MAX_NODES` + 1."""
    props = ", ".join(f"{k}: n.{k}" for k in ANCHOR_PROPS)
    return (
        f"MATCH (n:{check_label(label)}) RETURN {{{props}}} AS props, "
        f"toLower({text_of('n')}) AS txt LIMIT {MAX_NODES + 1}"
    )


@dataclass(frozen=True)
class Candidates:
    """The ids whose text holds a term, in node order, and every node's props by id."""

    ids: list[str]
    props: Mapping[str, dict[str, Any]]


@dataclass(frozen=True)
class LabelTexts:
    """One label's folded texts joined by NUL, where each starts, and the nodes' props (none
    when the label cannot be narrowed: module docstring)."""

    ids: tuple[str, ...] = ()
    joined: str = ""
    starts: tuple[int, ...] = ()
    props: dict[str, dict[str, Any]] = field(default_factory=dict)
    usable: bool = False

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> LabelTexts:
        """From :func:`texts_statement`'s rows."""
        ids = [r["props"].get("id") for r in rows]
        texts = [fold(str(r["txt"] or "")) for r in rows]
        plain = all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)
        if not plain or len(rows) > MAX_NODES or any(_SEP in t for t in texts):
            return cls()
        starts, at = [], 0
        for text in texts:
            starts.append(at)
            at += len(text) + 1
        props = {str(r["props"]["id"]): present(r["props"]) for r in rows}
        return cls(tuple(map(str, ids)), _SEP.join(texts), tuple(starts), props, usable=True)

    def matching(self, terms: Sequence[str]) -> list[str]:
        """Ids of the nodes whose text contains one of ``terms`` (folded), in node order."""
        hits: set[int] = set()
        for term in dict.fromkeys(t for t in terms if t):
            at = self.joined.find(term)
            while at >= 0:
                node = bisect_right(self.starts, at) - 1
                hits.add(node)
                if node + 1 == len(self.starts):
                    break
                at = self.joined.find(term, self.starts[node + 1])  # on to the next text
        return [self.ids[node] for node in sorted(hits)]


def present(props: Mapping[str, Any]) -> dict[str, Any]:
    """``props`` without the keys whose value is None (properties the node lacks)."""
    return {k: v for k, v in props.items() if v is not None}


class AnchorTexts:
    """Folded node texts and anchor props per label, read once per graph generation (module
    docstring)."""

    def __init__(self, memo: GraphMemo[LabelTexts]) -> None:
        self.memo = memo

    def candidates(
        self, store: GraphStore, label: str, terms: Sequence[str], timeout_s: float | None = None
    ) -> Candidates | None:
        """The ``label`` nodes whose folded text contains one of ``terms`` (folded as the
        filter's ``$f_terms``); None when the label cannot be narrowed."""
        if label in UNCOUNTED:
            return None
        statement = texts_statement(label)
        texts = self.memo.get(
            memo_key(store.name, statement),
            lambda: LabelTexts.of(store.run(statement, {}, timeout_s=timeout_s)),
        )
        return Candidates(texts.matching(terms), texts.props) if texts.usable else None
