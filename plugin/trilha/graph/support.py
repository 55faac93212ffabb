"""Access summaries: the chunks behind a RELATED edge or an Entity, grouped by who may see them.

A RELATED edge is seen only when a chunk the principal sees mentions both its ends, and its
weight counts those chunks (:mod:`trilha.graph.visibility`); an entity's document frequency
(the KG boost's specificity) counts the visible chunks that mention it. Walking to the chunks
at read time costs a sub-walk per edge, so the writer stores on each RELATED edge (the chunks
mentioning both ends) and each Entity (the chunks mentioning it) the *access summary* of those
chunks: one entry per distinct access signature (a chunk's
:data:`~trilha.access.ACCESS_KEYS`) with how many chunks carry it, as parallel list properties:

* ``support_n``: the chunk count of each entry;
* ``support_<key>`` for each access key: strings (``''`` for none), ints (``-1`` for none), and
  ``acl`` as its roles each preceded by :data:`SEP` (``''`` for none);
* on an Entity, ``support_salience``: the highest mention salience of each entry's chunks
  (``-1`` for none), so the salience a principal is shown is the highest over the entries it
  sees (:meth:`~trilha.graph.visibility.Visibility.salience`), never moved by a hidden chunk.

A read compiles the principal's rule once more with :func:`entry_value` as accessor, which
decodes entry ``vis_i`` (a none reads as null, exactly as a missing node property does), and
sums the counts of the entries it admits: the number of visible chunks, with no walk. An edge
or entity without a summary reads as supported by no chunk (fail closed).

The writer keeps the summaries current wherever the chunks behind them change: units written
(mentions and access fields), records written (MENTIONS and RELATED records, Chunk nodes),
chunks removed, a document replaced or deleted, access fields rewritten; a graph written before
summaries existed gets them on open (:func:`upgrade_support`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trilha.access import ACCESS_KEYS
from trilha.graph.stores.base import GraphStore, batched, write_rows

#: Separator of the roles in ``support_acl`` (roles never hold control characters); written
#: into statements as a literal, which FalkorDB and ArcadeDB read alike.
SEP = "\x1f"
#: Access keys whose values are ints; the others are strings, ``acl`` a list of strings.
INT_KEYS = frozenset({"sensitivity", "hierarchy_level"})

_INDEX = "vis_i"


def prop(key: str) -> str:
    """The list property holding ``key`` of every entry (``support_n`` for the counts)."""
    return f"support_{key}"


def entry_value(key: str) -> str:
    """The :data:`~trilha.access.cypher.Accessor` of summaries: ``key`` of entry ``vis_i`` of
    the summary on ``{v}``, decoded (null when the chunks had no value)."""
    x = f"{{v}}.{prop(key)}[{_INDEX}]"
    if key == "acl":
        return f"CASE {x} WHEN '' THEN null ELSE tail(split({x}, '{SEP}')) END"
    none = "-1" if key in INT_KEYS else "''"
    return f"CASE {x} WHEN {none} THEN null ELSE {x} END"


def entries(var: str) -> str:
    """``vis_i IN <the entry indexes of var's summary>`` (none when it has no summary)."""
    return f"{_INDEX} IN range(0, size(coalesce({var}.{prop('n')}, [])) - 1)"


def count_of(var: str) -> str:
    """The chunk count of entry ``vis_i`` of ``var``'s summary."""
    return f"{var}.{prop('n')}[{_INDEX}]"


def salience_of(var: str) -> str:
    """The highest mention salience of the chunks of entry ``vis_i`` of entity ``var``'s
    summary (-1 for none)."""
    return f"{var}.{prop('salience')}[{_INDEX}]"


def has_entries(var: str) -> str:
    """Some chunk is behind ``var`` (its summary has an entry)."""
    return f"size(coalesce({var}.{prop('n')}, [])) > 0"


def _encoded(key: str) -> str:
    if key == "acl":
        return f"reduce(s = '', x IN coalesce(c.acl, []) | s + '{SEP}' + x)"
    none = "-1" if key in INT_KEYS else "''"
    return f"coalesce(c.{key}, {none})"


def summary_of(group: str, fields: Mapping[str, str] | None = None, carried: str = "") -> str:
    """From rows ``<group>, c`` (distinct chunks ``c``, possibly null) on, group ``c`` by
    access signature into ``sig``, the entries in signature order (writing the same graph twice
    stores the same lists): ``WITH <group><carried>, sig``. ``fields`` adds per entry an
    aggregate over its chunks (name to expression, read as ``x_<name>``); ``carried``
    re-aggregates per ``group`` (``n`` is each entry's count)."""
    more = dict(fields or {})
    keys = ", ".join(f"{_encoded(k)} AS k_{k}" for k in ACCESS_KEYS)
    extra = "".join(f", {agg} AS x_{name}" for name, agg in more.items())
    entry = ", ".join([*(f"{f}: x_{f}" for f in more), *(f"{k}: k_{k}" for k in ACCESS_KEYS)])
    order = ", ".join(f"k_{k}" for k in ACCESS_KEYS)
    return (
        f"WITH {group}, {keys}, count(c) AS n{extra} ORDER BY {order} "
        f"WITH {group}{carried}, collect(CASE WHEN n > 0 THEN {{n: n, {entry}}} END) AS sig "
    )


def set_summary(var: str, fields: Iterable[str] = ()) -> str:
    """The assignments storing ``sig`` (:func:`summary_of`) as ``var``'s summary."""
    return ", ".join(f"{var}.{prop(k)} = [e IN sig | e.{k}]" for k in ("n", *fields, *ACCESS_KEYS))


#: The chunks mentioning both ends of ``(a)``-``(b)``, for :func:`summary_of`.
BOTH_ENDS = "OPTIONAL MATCH (a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b) "


def refresh_related() -> str:
    """Set the summary of every RELATED edge between the entities ``row.a`` and ``row.b`` from
    the chunks mentioning both (rows: ``{a, b}``)."""
    return (
        "UNWIND $rows AS row MATCH (a:Entity {id: row.a})-[r:RELATED]-(b:Entity {id: row.b}) "
        f"{BOTH_ENDS}WITH DISTINCT r, c " + summary_of("r") + "SET " + set_summary("r")
    )


def refresh_entities() -> str:
    """Set each entity's salience (its highest mention salience), ``chunks`` (how many chunks
    mention it: its document frequency) and summary, whose entries carry the highest mention
    salience of their chunks in ``support_salience`` (-1 for none; rows: entity ids)."""
    return (
        "UNWIND $rows AS k MATCH (e:Entity {id: k}) OPTIONAL MATCH (e)<-[m:MENTIONS]-(c:Chunk) "
        "WITH e, c, max(m.salience) AS ms "
        + summary_of("e", {"salience": "coalesce(max(ms), -1.0)"}, _ENTITY_TOTALS)
        + "SET "
        + set_summary("e", ("salience",))
        + ", e.salience = CASE WHEN s >= 0 THEN s ELSE coalesce(e.salience, 0.0) END, "
        "e.chunks = total"
    )


_ENTITY_TOTALS = ", max(x_salience) AS s, sum(n) AS total"


def pairs_supported_by() -> str:
    """``{a, b}`` of the RELATED edges both of whose ends a chunk ``row.id`` mentions (the
    edges whose summary it is part of), but for those between two of ``row.top`` (read)."""
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.id})-[:MENTIONS]->(a:Entity) "
        "WHERE NOT a.id IN row.top MATCH (a)-[:RELATED]-(b:Entity) "
        "WHERE (b.id IN row.top OR a.id < b.id) AND (c)-[:MENTIONS]->(b) "
        "RETURN DISTINCT a.id AS a, b.id AS b"
    )


def related_without_support() -> str:
    """``{a, b}`` of the RELATED edges that have no summary (written before them; read)."""
    return (
        "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.support_n IS NULL "
        "RETURN a.id AS a, b.id AS b"
    )


Pair = tuple[str, str]


def read_pairs(
    store: GraphStore, statement: str, rows: Sequence[Any], batch_size: int
) -> set[Pair]:
    """The pairs ``(a, b)``, ``a < b``, that ``statement`` returns as ``{a, b}`` over ``rows``
    (``UNWIND $rows``), sent ``batch_size`` at a time."""
    pairs: set[Pair] = set()
    for part in batched(rows, batch_size):
        for r in store.run(statement, {"rows": list(part)}):
            pairs.add((r["a"], r["b"]) if r["a"] < r["b"] else (r["b"], r["a"]))
    return pairs


def supported_pairs(
    store: GraphStore,
    chunk_ids: Iterable[str],
    skip: Mapping[str, Sequence[str]] | None = None,
    batch_size: int = 2000,
) -> set[Pair]:
    """The entity pairs ``(a, b)``, ``a < b``, of the RELATED edges whose summary the chunks
    ``chunk_ids`` are in, but for the edges between two of ``skip[chunk]`` (recomputed
    already)."""
    rows = [{"id": k, "top": list((skip or {}).get(k, ()))} for k in sorted(set(chunk_ids))]
    return read_pairs(store, pairs_supported_by(), rows, batch_size)


def refresh_pairs(store: GraphStore, pairs: Iterable[Pair], batch_size: int = 2000) -> int:
    """Recompute the summary of the RELATED edges between each pair; rows sent."""
    rows = [{"a": a, "b": b} for a, b in sorted(set(pairs))]
    return write_rows(store, refresh_related(), rows, batch_size=batch_size)


def entities_without_salience() -> str:
    """Ids of the entities whose summary has no ``support_salience`` (written before it; read)."""
    return "MATCH (e:Entity) WHERE e.support_salience IS NULL RETURN e.id AS id"


def upgrade_support(store: GraphStore, batch_size: int = 2000) -> int:
    """Give every RELATED edge without a summary one, and every entity whose summary lacks
    ``support_salience`` a new one; how many (0: nothing to do)."""
    rows = store.run(related_without_support(), {})
    refresh_pairs(store, ((r["a"], r["b"]) for r in rows), batch_size)
    ids = sorted(r["id"] for r in store.run(entities_without_salience(), {}))
    write_rows(store, refresh_entities(), ids, batch_size=batch_size)
    return len(rows) + len(ids)
