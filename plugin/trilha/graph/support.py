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
  ``acl`` as its roles each preceded by :data:`SEP` (``''`` for none).

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

from collections.abc import Iterable

from trilha.access import ACCESS_KEYS
from trilha.graph.stores.base import GraphStore, write_rows

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


def _encoded(key: str) -> str:
    if key == "acl":
        return f"reduce(s = '', x IN coalesce(c.acl, []) | s + '{SEP}' + x)"
    none = "-1" if key in INT_KEYS else "''"
    return f"coalesce(c.{key}, {none})"


def _summarised(var: str, extra: str = "", carried: str = "") -> str:
    """From rows ``var, c`` (distinct chunks ``c``, possibly null) on, group ``c`` by access
    signature and SET ``var``'s summary, entries in signature order (writing the same graph
    twice stores the same lists); ``extra`` adds aggregates per signature and ``carried``
    re-aggregates them per ``var``."""
    keys = ", ".join(f"{_encoded(k)} AS k_{k}" for k in ACCESS_KEYS)
    entry = ", ".join(f"{k}: k_{k}" for k in ACCESS_KEYS)
    sets = ", ".join(f"{var}.{prop(k)} = [e IN sig | e.{k}]" for k in ("n", *ACCESS_KEYS))
    order = ", ".join(f"k_{k}" for k in ACCESS_KEYS)
    return (
        f"WITH {var}, {keys}, count(c) AS n{extra} ORDER BY {order} "
        f"WITH {var}{carried}, collect(CASE WHEN n > 0 THEN {{n: n, {entry}}} END) AS sig "
        f"SET {sets}"
    )


def refresh_related() -> str:
    """Set the summary of every RELATED edge between the entities ``row.a`` and ``row.b`` from
    the chunks mentioning both (rows: ``{a, b}``)."""
    return (
        "UNWIND $rows AS row MATCH (a:Entity {id: row.a})-[r:RELATED]-(b:Entity {id: row.b}) "
        "OPTIONAL MATCH (a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b) WITH DISTINCT r, c "
        + _summarised("r")
    )


def refresh_entities() -> str:
    """Set each entity's salience (its highest mention salience), ``chunks`` (how many chunks
    mention it: its document frequency) and summary (rows: entity ids)."""
    return (
        "UNWIND $rows AS k MATCH (e:Entity {id: k}) OPTIONAL MATCH (e)<-[m:MENTIONS]-(c:Chunk) "
        "WITH e, c, max(m.salience) AS ms "
        + _summarised("e", ", max(ms) AS s", ", max(s) AS s, sum(n) AS total")
        + ", e.salience = coalesce(s, e.salience, 0.0), e.chunks = total"
    )


def pairs_supported_by() -> str:
    """``{a, b}`` (``a < b``) of the RELATED edges both of whose ends a chunk in ``$ids``
    mentions: the edges whose summary that chunk is part of (read)."""
    return (
        "UNWIND $ids AS k MATCH (c:Chunk {id: k})-[:MENTIONS]->(a:Entity)-[:RELATED]-(b:Entity) "
        "WHERE a.id < b.id AND (c)-[:MENTIONS]->(b) RETURN DISTINCT a.id AS a, b.id AS b"
    )


def related_without_support() -> str:
    """``{a, b}`` of the RELATED edges that have no summary (written before them; read)."""
    return (
        "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.support_n IS NULL "
        "RETURN a.id AS a, b.id AS b"
    )


Pair = tuple[str, str]


def supported_pairs(store: GraphStore, chunk_ids: Iterable[str]) -> set[Pair]:
    """The entity pairs of the RELATED edges whose summary the chunks ``chunk_ids`` are in."""
    ids = sorted(set(chunk_ids))
    if not ids:
        return set()
    return {(r["a"], r["b"]) for r in store.run(pairs_supported_by(), {"ids": ids})}


def refresh_pairs(store: GraphStore, pairs: Iterable[Pair], batch_size: int = 2000) -> int:
    """Recompute the summary of the RELATED edges between each pair; rows sent."""
    rows = [{"a": a, "b": b} for a, b in sorted(set(pairs))]
    return write_rows(store, refresh_related(), rows, batch_size=batch_size)


def upgrade_support(store: GraphStore, batch_size: int = 2000) -> int:
    """Give every RELATED edge without a summary one; how many edges (0: nothing to do)."""
    rows = store.run(related_without_support(), {})
    refresh_pairs(store, ((r["a"], r["b"]) for r in rows), batch_size)
    return len(rows)
