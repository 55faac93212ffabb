"""Rows the graph writer sends: one plain dict per Doc, Chunk, category/tag link, explicit node
or edge, built from units and records without any I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from trilha.graph.extract import ExtractedEntity
from trilha.graph.model import NODE_SPECS, node_key, normalise_name
from trilha.graph.records import EdgeRecord, NodeRecord
from trilha.types import TextUnit


def _compact(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if v is not None}


def category_of(unit: TextUnit) -> str | None:
    """A unit's category: ``extra['category']`` when it is a string, else ``tema``."""
    value = unit.extra.get("category")
    return value if isinstance(value, str) and value.strip() else unit.tema


def updated_at_of(unit: TextUnit) -> str | None:
    """``extra['updated_at']`` when set, else the content ``date``, else ``created_at``."""
    value = unit.extra.get("updated_at")
    return value if isinstance(value, str) and value else unit.date or unit.created_at


def doc_rows(units: Sequence[TextUnit]) -> list[dict[str, Any]]:
    """One ``{id, props}`` row per document (the last unit of a document wins)."""
    docs: dict[str, dict[str, Any]] = {}
    for u in units:
        docs[u.doc_id] = {
            "id": u.doc_id,
            "props": _compact(
                {
                    "title": u.title,
                    "updated_at": updated_at_of(u),
                    "lang": u.lang.lower(),
                    "owner_id": u.owner_id,
                    "visibility": u.visibility,
                    "hierarchy_level": u.hierarchy_level,
                    "source_ref": u.source_ref,
                }
            ),
        }
    return list(docs.values())


def chunk_rows(units: Sequence[TextUnit]) -> list[dict[str, Any]]:
    """One ``{id, doc_id, props}`` row per unit."""
    return [
        {
            "id": u.unit_id,
            "doc_id": u.doc_id,
            "props": {"doc_id": u.doc_id, "ordinal": u.ordinal, "lang": u.lang.lower()},
        }
        for u in units
    ]


Links = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def link_rows(units: Sequence[TextUnit]) -> tuple[Links, Links]:
    """Category and tag links: ``([{doc, id, name}], [{doc, keep}])`` for each of the two."""
    cats: dict[str, dict[str, str]] = {}
    tags: dict[str, dict[str, str]] = {}
    for u in units:
        category = category_of(u)
        names = [category] if category else []
        cats.setdefault(u.doc_id, {}).update({normalise_name(n): n for n in names if n.strip()})
        tags.setdefault(u.doc_id, {}).update({normalise_name(t): t for t in u.tags if t.strip()})
    return _links(cats), _links(tags)


def _links(by_doc: Mapping[str, Mapping[str, str]]) -> Links:
    links = [
        {"doc": d, "id": k, "name": n} for d, names in by_doc.items() for k, n in names.items()
    ]
    return links, [{"doc": d, "keep": sorted(names)} for d, names in by_doc.items()]


def dedupe(found: Sequence[ExtractedEntity]) -> dict[str, ExtractedEntity]:
    best: dict[str, ExtractedEntity] = {}
    for e in found:
        key = normalise_name(e.name)
        if key and (key not in best or e.salience > best[key].salience):
            best[key] = e
    return best


def pairs_of(keys_by_salience: Sequence[str], top: int) -> set[tuple[str, str]]:
    """Ordered ``(a, b)`` pairs, ``a < b``, among the ``top`` most salient entities of a chunk."""
    return {(a, b) if a < b else (b, a) for a, b in combinations(keys_by_salience[:top], 2)}


def node_row(r: NodeRecord) -> dict[str, Any]:
    props: dict[str, Any] = {**r.props, "origin": "record"}
    if NODE_SPECS[r.label].named:
        props.setdefault("name", r.id)
    checked = NODE_SPECS[r.label].props.model_validate(props).model_dump(exclude_none=True)
    return {"id": node_key(r.label, r.id), "props": checked}


def edge_row(r: EdgeRecord) -> dict[str, Any]:
    """Row of an explicit edge; RELATED (undirected) is stored from the smaller id."""
    (sl, si), (tl, ti) = r.endpoints()
    s_key, t_key = node_key(sl, si), node_key(tl, ti)
    if r.type == "RELATED" and s_key > t_key:
        (si, s_key), (ti, t_key) = (ti, t_key), (si, s_key)
    return {
        "source": s_key,
        "target": t_key,
        "s_name": si if NODE_SPECS[sl].named else None,
        "t_name": ti if NODE_SPECS[tl].named else None,
        "props": {**r.props, "origin": "record"},
    }
