"""Rows the graph writer sends: one plain dict per Doc, Chunk, category/tag link, explicit node
or edge, built from units and records without any I/O."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from trilha.errors import BadRequestError
from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.records import EdgeRecord, NodeRecord, locate, refuse
from trilha.graph.model import NODE_SPECS, node_key, normalise_name
from trilha.graph.visibility import record_access, unit_access
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
    """One ``{id, props}`` row per document (the last unit of a document wins), with the
    access fields (:func:`~trilha.graph.visibility.unit_access`)."""
    docs: dict[str, dict[str, Any]] = {}
    for u in units:
        docs[u.doc_id] = {
            "id": u.doc_id,
            "props": {
                **_compact(
                    {
                        "title": u.title,
                        "updated_at": updated_at_of(u),
                        "lang": u.lang.lower(),
                        "source_ref": u.source_ref,
                    }
                ),
                **unit_access(u),
            },
        }
    return list(docs.values())


def chunk_rows(units: Sequence[TextUnit]) -> list[dict[str, Any]]:
    """One ``{id, doc_id, props}`` row per unit, with its access fields."""
    return [
        {
            "id": u.unit_id,
            "doc_id": u.doc_id,
            "props": {
                "doc_id": u.doc_id,
                "ordinal": u.ordinal,
                "lang": u.lang.lower(),
                **unit_access(u),
            },
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


def node_row(r: NodeRecord, access_defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Row of an explicit node; an own-labelled one (Task, User...) gets its access fields from
    its props over ``access_defaults`` (:func:`~trilha.graph.visibility.record_access`)."""
    props: dict[str, Any] = {**r.props, "origin": "record"}
    if NODE_SPECS[r.label].named:
        props.setdefault("name", r.id)
    checked = NODE_SPECS[r.label].props.model_validate(props).model_dump(exclude_none=True)
    access = record_access(r.label, r.props, access_defaults or {})
    return {"id": node_key(r.label, r.id), "props": {**checked, **access}}


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


NodeRows = dict[str, list[dict[str, Any]]]
EdgeRows = dict[tuple[str, str, str], list[dict[str, Any]]]


def record_rows(
    batch: Sequence[NodeRecord | EdgeRecord], access_defaults: Mapping[str, Any] | None
) -> tuple[NodeRows, EdgeRows]:
    """Rows per node label and per (type, source label, target label). Node access fields
    come from props over ``access_defaults`` (None: a unit's own defaults, public, sensitivity
    0, level 0); every bad one is listed in one :class:`~trilha.errors.BadRequestError`."""
    defaults = access_defaults or {}
    nodes: NodeRows = defaultdict(list)
    edges: EdgeRows = defaultdict(list)
    errors: list[str] = []
    for where, r in zip(locate(batch), batch, strict=True):
        if isinstance(r, NodeRecord):
            try:
                nodes[r.label].append(node_row(r, defaults))
            except BadRequestError as e:
                errors.append(f"{where}: {e}")
        else:
            (sl, _), (tl, _) = r.endpoints()
            edges[(r.type, sl, tl)].append(edge_row(r))
    refuse(errors)
    return nodes, edges


def summaries_touched(
    batch: Sequence[NodeRecord | EdgeRecord],
) -> tuple[set[str], set[tuple[str, str]]]:
    """What ``batch`` may change in the access summaries (:mod:`trilha.graph.support`): the
    chunks it writes (Chunk nodes, MENTIONS from a Chunk) and the entity pairs (``a < b``) of
    its RELATED edges."""
    chunks: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for r in batch:
        if isinstance(r, NodeRecord):
            if r.label == "Chunk":
                chunks.add(node_key("Chunk", r.id))
            continue
        (sl, si), (tl, ti) = r.endpoints()
        if r.type == "MENTIONS" and sl == "Chunk":
            chunks.add(node_key("Chunk", si))
        elif r.type == "RELATED":
            a, b = sorted((node_key(sl, si), node_key(tl, ti)))
            pairs.add((a, b))
    return chunks, pairs
