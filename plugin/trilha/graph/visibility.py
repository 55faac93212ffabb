"""Which graph nodes and edges a principal sees, as Cypher the reads embed.

Two kinds of node:

* **own** nodes carry the access fields (:data:`~trilha.access.policy.ACCESS_KEYS`): Doc and
  Chunk (from their units) and every record label (Task, Project, User, Org..., from the
  record's props with the workspace defaults). They are seen by their own fields
  (:func:`trilha.access.cypher.visible_where`).
* **shared** nodes (:data:`SHARED_LABELS`: Entity, Category, Tag, Criterio, Fato, Prova) belong
  to whatever links to them. One is seen only when a visible own node links to it (a visible
  chunk MENTIONS the entity, a visible doc is IN_CATEGORY, HAS_FATO...).

Every relationship type but RELATED has an own end, so on a walked path without RELATED whose
own nodes are all visible, each shared node sits next to a visible own node: the path predicate
:meth:`Visibility.path` is exactly that. A RELATED edge is seen only when some visible chunk
mentions both its ends (:meth:`Visibility.supported`); otherwise it would reveal a hidden
co-occurrence. Its weight is then recomputed from the visible chunks (:func:`visible_weight`).
Both read the edge's access summary (:mod:`trilha.graph.support`) instead of walking to the
chunks; so do the KG boost for an entity's visible document frequency and the reads for the
salience an entity shows (:meth:`Visibility.salience`: its highest mention salience over the
visible chunks).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from trilha.access import ACCESS_KEYS, Principal
from trilha.access.compiled import POLICIES
from trilha.access.cypher import CypherVisibility
from trilha.errors import BadRequestError, one_line
from trilha.graph import support as summary
from trilha.graph.model import NODE_SPECS, cooccurrence_weight
from trilha.types import TextUnit

#: Labels seen through what links to them, not by fields of their own.
SHARED_LABELS = frozenset({"Entity", "Category", "Tag", "Criterio", "Fato", "Prova"})
#: Labels whose access fields come from their units (the unit store is the truth).
UNIT_LABELS = frozenset({"Doc", "Chunk"})
#: Labels that carry the access fields.
OWN_LABELS = frozenset(NODE_SPECS) - SHARED_LABELS


@dataclass(frozen=True)
class Visibility:
    """One principal's visibility in Cypher: fragments over variables, and their parameters.
    ``compiled`` reads a node's access fields, ``entry`` those of entry ``vis_i`` of an access
    summary (both share the parameters)."""

    compiled: CypherVisibility
    entry: CypherVisibility

    @classmethod
    def of(cls, principal: Principal | None) -> Visibility:
        """The visibility of ``principal`` (None: anonymous), from its policy compiled once
        (:data:`~trilha.access.compiled.POLICIES`)."""
        policy = POLICIES.get(principal or Principal.anonymous())
        return cls(policy.cypher, policy.cypher_for(summary.entry_value))

    @property
    def params(self) -> dict[str, Any]:
        """Parameters every fragment below needs."""
        return {**self.compiled.params, "vis_shared": sorted(SHARED_LABELS)}

    def own(self, var: str) -> str:
        """``var`` (an own node) is visible by its fields."""
        return self.compiled.where(var)

    def node(self, var: str) -> str:
        """``var`` is shared, or an own node visible by its fields (sound on :meth:`path`s)."""
        return f"(labels({var})[0] IN $vis_shared OR {self.own(var)})"

    def path(self, var: str) -> str:
        """Path ``var`` has no RELATED hop and every own node on it is visible."""
        return (
            f"all(vis_x IN nodes({var}) WHERE {self.node('vis_x')}) AND "
            f"none(vis_r IN relationships({var}) WHERE type(vis_r) = 'RELATED')"
        )

    def support(self, var: str) -> str:
        """How many visible chunks are behind ``var`` (a RELATED edge: the chunks mentioning
        both ends; an Entity: those mentioning it), summed over its access summary."""
        counts = self._seen(var, summary.count_of(var))
        return f"reduce(vis_n = 0, vis_c IN {counts} | vis_n + vis_c)"

    def salience(self, var: str) -> str:
        """The salience shown for Entity ``var``: the highest mention salience of the chunks
        the principal sees (from its summary; null when it sees none), or, when no chunk
        mentions it at all, its stored salience (a record's)."""
        at = summary.salience_of(var)
        best = (
            f"reduce(vis_s = null, vis_v IN {self._seen(var, at, f'{at} >= 0 AND ')} | "
            "CASE WHEN vis_s IS NULL OR vis_v > vis_s THEN vis_v ELSE vis_s END)"
        )
        return f"CASE WHEN {summary.has_entries(var)} THEN {best} ELSE {var}.salience END"

    def _seen(self, var: str, value: str, also: str = "") -> str:
        """``value`` of each entry of ``var``'s summary the principal sees, as a list.

        Entries are kept by a list comprehension, and a value is tested before the fold
        rather than inside a ``reduce``'s ``CASE`` or a ``head()`` over a list after it:
        FalkorDB plans those forms many times slower (0.6–1.2 s against 0.04–0.08 s for the
        salience of one Entity on a fresh server), and each new statement pays it once."""
        return f"[{summary.entries(var)} WHERE {also}{self.entry.where(var)} | {value}]"

    def supported(self, var: str) -> str:
        """Some visible chunk is behind ``var`` (see :meth:`support`)."""
        return f"any({summary.entries(var)} WHERE {self.entry.where(var)})"


def visible_weight(props: Mapping[str, Any], support: int) -> float | None:
    """A RELATED edge's weight as the principal may see it: a record's curated weight, else
    :func:`~trilha.graph.model.cooccurrence_weight` of the visible chunks mentioning both."""
    if props.get("origin") == "record":
        weight = props.get("weight")
        return float(weight) if isinstance(weight, int | float) else None
    return cooccurrence_weight(int(support))


def unit_access(unit: TextUnit) -> dict[str, Any]:
    """The access properties of a unit's Doc and Chunk nodes (``acl`` is ``[OPEN_ACL]`` when
    the unit has none; unset ids are None, which removes a stale value)."""
    payload = unit.payload()
    return {k: payload[k] for k in ACCESS_KEYS}


def record_access(
    label: str, props: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """The access properties of an own-labelled record node: its props over ``defaults``,
    checked by the very rules units obey (an unknown visibility, an 'org' item without
    ``org_id``... is one :class:`BadRequestError` line). A Doc or Chunk record gets none: those
    nodes carry their units' fields, which a record may not set (refused) nor overwrite."""
    if label in SHARED_LABELS:
        return {}
    if label in UNIT_LABELS:
        given = sorted(k for k in props if k in ACCESS_KEYS)
        if given:
            raise BadRequestError(
                f"{label} access comes from its document's units, not from a record: remove "
                f"{', '.join(given)} from the record (set them in the document's front matter)"
            )
        return {}
    fields = {k: v for k, v in {**defaults, **props}.items() if k in ACCESS_KEYS and v is not None}
    try:
        checked = TextUnit(unit_id="record", doc_id="record", text="", **fields)
    except ValidationError as e:
        raise BadRequestError(f"{label} access: {one_line(e)}") from None
    return unit_access(checked)
