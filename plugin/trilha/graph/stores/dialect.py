"""The few Cypher statements that differ per backend, in one table.

Everything else trilha sends is portable Cypher that runs unchanged on Neo4j 5, ArcadeDB (Bolt)
and FalkorDB. Differences found on the real servers:

- **index creation** — FalkorDB: ``CREATE INDEX FOR (n:L) ON (n.p)``, no ``IF NOT EXISTS``
  (an existing index is an error, "already indexed", which is ignored). Neo4j 5 / ArcadeDB:
  ``CREATE INDEX IF NOT EXISTS FOR (n:L) ON (n.p)``.
- **shortest path** — FalkorDB rejects ``MATCH p=shortestPath(...)`` (its ``algo.SPpaths``
  differs from Neo4j's ``shortestPath``); neither can skip what a principal may not see, so
  trilha searches paths itself (:mod:`trilha.graph.read.path_search`) and uses neither.
- **EXISTS {} / COUNT {} subqueries, elementId()** — not on FalkorDB; fine on the others.
- **read queries on a graph that does not exist yet** — FalkorDB errors ("empty key"); its store
  creates the empty graph and runs the read again.

trilha therefore never uses ``EXISTS {}``, ``COUNT {}``, ``elementId()``, dynamic labels or APOC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trilha.errors import ConfigurationError
from trilha.graph.model import check_label, check_prop_name

DialectName = Literal["falkordb", "cypher"]


@dataclass(frozen=True)
class Dialect:
    """One backend's spelling of the statements that are not portable."""

    name: DialectName
    create_index: str
    index_exists_markers: tuple[str, ...]


FALKORDB = Dialect(
    name="falkordb",
    create_index="CREATE INDEX FOR (n:{label}) ON (n.{prop})",
    index_exists_markers=("already indexed", "already exists"),
)

CYPHER = Dialect(
    name="cypher",
    create_index="CREATE INDEX IF NOT EXISTS FOR (n:{label}) ON (n.{prop})",
    index_exists_markers=("already exists", "equivalent index"),
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
