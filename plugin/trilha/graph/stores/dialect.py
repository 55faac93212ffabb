"""The few Cypher statements that differ per backend, in one table.

Everything else trilha sends is portable Cypher that runs unchanged on Neo4j 5, ArcadeDB (Bolt)
and FalkorDB. Differences found on the real servers:

- **index creation** — FalkorDB: ``CREATE INDEX FOR (n:L) ON (n.p)``, no ``IF NOT EXISTS``
  (an existing index is an error, "already indexed", which is ignored). Neo4j 5 / ArcadeDB:
  ``CREATE INDEX IF NOT EXISTS FOR (n:L) ON (n.p)``.
- **shortest path** — FalkorDB rejects ``MATCH p=shortestPath(...)``; ``shortestPath`` is only
  allowed in WITH/RETURN and only *directed*, so the undirected search is the ``algo.SPpaths``
  procedure (``relDirection: 'both'``) with its bounds as parameters. Neo4j 5 / ArcadeDB:
  ``MATCH path = shortestPath((src)-[:T*..k]-(dst))`` with ``k`` an inlined, validated int
  (variable-length bounds cannot be parameters there).
- **EXISTS {} / COUNT {} subqueries, elementId()** — not on FalkorDB; fine on the others.
- **read queries on a graph that does not exist yet** — FalkorDB errors ("empty key"); its store
  creates the empty graph and runs the read again.

trilha therefore never uses ``EXISTS {}``, ``COUNT {}``, ``elementId()``, dynamic labels or APOC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trilha.errors import ConfigurationError
from trilha.graph.model import check_label, check_prop_name, check_rel_type

DialectName = Literal["falkordb", "cypher"]


@dataclass(frozen=True)
class Dialect:
    """One backend's spelling of the statements that are not portable."""

    name: DialectName
    create_index: str
    index_exists_markers: tuple[str, ...]
    shortest_path: str
    max_length_as_param: bool


FALKORDB = Dialect(
    name="falkordb",
    create_index="CREATE INDEX FOR (n:{label}) ON (n.{prop})",
    index_exists_markers=("already indexed", "already exists"),
    shortest_path=(
        "CALL algo.SPpaths({sourceNode: src, targetNode: dst, relTypes: $rel_types, "
        "relDirection: 'both', maxLen: $max_length, pathCount: 1}) YIELD path"
    ),
    max_length_as_param=True,
)

CYPHER = Dialect(
    name="cypher",
    create_index="CREATE INDEX IF NOT EXISTS FOR (n:{label}) ON (n.{prop})",
    index_exists_markers=("already exists", "equivalent index"),
    shortest_path="MATCH path = shortestPath((src)-[:{rel_types}*..{max_length}]-(dst))",
    max_length_as_param=False,
)

DIALECTS: dict[str, Dialect] = {d.name: d for d in (FALKORDB, CYPHER)}


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name`` ('falkordb' or 'cypher')."""
    try:
        return DIALECTS[name]
    except KeyError as e:
        raise ConfigurationError(
            f"unknown graph dialect {name!r}; use one of {list(DIALECTS)}"
        ) from e


def index_statement(dialect: Dialect, label: str, prop: str) -> str:
    """The statement creating a range index on ``label.prop`` (both allow-listed)."""
    return dialect.create_index.format(label=check_label(label), prop=check_prop_name(prop))


def shortest_path_clause(dialect: Dialect, rel_types: tuple[str, ...], max_length: int) -> str:
    """A clause binding ``path`` to one shortest undirected path from ``src`` to ``dst``.

    ``max_length`` must already be a validated int; ``rel_types`` are allow-listed here. On
    FalkorDB both travel as parameters (``$rel_types``, ``$max_length``).
    """
    types = tuple(check_rel_type(t) for t in rel_types)
    if not types:
        raise ConfigurationError("shortest path needs at least one relationship type")
    if dialect.max_length_as_param:
        return dialect.shortest_path
    return dialect.shortest_path.format(rel_types="|".join(types), max_length=int(max_length))
