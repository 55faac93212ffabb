"""Cypher of the graph reads (seed 003): visible nodes, subgraph walks, top-N (the path search
has its own, :mod:`trilha.graph.read.path_search`).

Builders take allow-listed labels / relationship types and validated ints only; every value is a
``$parameter``. Graph objects are projected to maps (``{label, props}``, ``{type, s_label, s_id,
t_label, t_id, props}``) so backends return plain dicts; ``props`` holds only what results show
(:data:`REL_PROPS`, a label's shown fields), never an access summary, which describes chunks the
caller may not see (and would cost its parsing on every row). Every read of what a caller may see
takes a :class:`~trilha.graph.visibility.Visibility` and embeds its fragments (the caller passes
``vis.params`` with the other parameters), so the principal's rule runs inside the statement,
before any ``LIMIT``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trilha.graph.model import NODE_SPECS, check_label, check_rel_type
from trilha.graph.visibility import Visibility

#: Relationship properties a read returns.
REL_PROPS = ("weight", "salience", "peso", "origin")


def _props(var: str, keys: Sequence[str]) -> str:
    return "{" + ", ".join(f"{k}: {var}.{k}" for k in keys) + "}"


def node_map(var: str, vis: Visibility | None) -> str:
    """``{label, props}`` of node ``var``; ``props``: its id, name and shown fields. With
    ``vis``, the map also holds ``salience``, the one ``vis`` may see of an Entity
    (:meth:`~trilha.graph.visibility.Visibility.salience`), which :func:`node_props` puts in
    ``props``; without, ``props`` holds the stored one (the writer's own reads). The salience
    sits outside the ``CASE`` over labels because FalkorDB plans it there 4x faster (0.17 s
    against 0.67 s for one statement on a fresh server)."""
    cases = " ".join(
        f"WHEN '{label}' THEN "
        + _props(var, list(dict.fromkeys(("id", *(("name",) if spec.named else ()), *spec.shown))))
        for label, spec in NODE_SPECS.items()
    )
    shown = f", salience: {vis.salience(var)}" if vis is not None else ""
    return (
        f"{{label: labels({var})[0], props: CASE labels({var})[0] {cases} "
        f"ELSE {{id: {var}.id}} END{shown}}}"
    )


def node_props(node: Mapping[str, Any]) -> dict[str, Any]:
    """The ``props`` of a :func:`node_map` row, an Entity's visible salience in them."""
    props = dict(node.get("props") or {})
    if node.get("label") == "Entity" and "salience" in node:
        props["salience"] = node["salience"]
    return props


def rel_map(var: str) -> str:
    """``{type, s_label, s_id, t_label, t_id, props}`` of relationship ``var``; ``props``:
    :data:`REL_PROPS`."""
    return (
        f"{{type: type({var}), s_label: labels(startNode({var}))[0], s_id: startNode({var}).id, "
        f"t_label: labels(endNode({var}))[0], t_id: endNode({var}).id, "
        f"props: {_props(var, REL_PROPS)}}}"
    )


def _types(rel_types: Sequence[str]) -> str:
    return "|".join(check_rel_type(t) for t in rel_types)


def visible_nodes(label: str, vis: Visibility) -> str:
    """``{label, props}`` of the own-labelled ``label`` nodes in ``$ids`` that ``vis`` sees."""
    return (
        f"UNWIND $ids AS k MATCH (n:{check_label(label)} {{id: k}}) WHERE {vis.own('n')} "
        f"RETURN {node_map('n', vis)} AS node"
    )


def _paths(rel_types: Sequence[str], max_hops: int, with_names: bool, vis: Visibility) -> str:
    names = " AND n:Entity AND n.id IN $names" if with_names else ""
    return (
        f"MATCH (d:Doc {{id: $doc_id}}) WHERE {vis.own('d')} "
        f"MATCH p = (d)-[:{_types(rel_types)}*1..{int(max_hops)}]-(n) "
        f"WHERE {vis.path('p')}{names} WITH p LIMIT $path_cap "
    )


def subgraph_nodes(
    rel_types: Sequence[str], max_hops: int, with_names: bool, vis: Visibility
) -> str:
    """The ``$node_cap`` nearest distinct nodes on the first ``$path_cap`` paths of
    1..``max_hops`` hops from Doc ``$doc_id`` (ties by label, then id), each with its shortest
    distance ``dist``; also ``paths``, the number of paths seen.

    With ``with_names`` only paths ending at an Entity whose id is in ``$names`` count. Only
    paths ``vis`` sees in full are walked (:meth:`~trilha.graph.visibility.Visibility.path`).
    """
    return (
        _paths(rel_types, max_hops, with_names, vis)
        + "WITH collect(p) AS ps WITH ps, size(ps) AS paths UNWIND ps AS p "
        "UNWIND range(0, length(p)) AS i WITH paths, nodes(p)[i] AS x, i "
        "WITH paths, x, min(i) AS dist ORDER BY dist, labels(x)[0], x.id LIMIT $node_cap "
        f"RETURN {node_map('x', vis)} AS node, dist, paths"
    )


def subgraph_rels(
    rel_types: Sequence[str], max_hops: int, with_names: bool, vis: Visibility
) -> str:
    """Distinct relationships on the same paths as :func:`subgraph_nodes` whose two ends are
    in ``$kept`` (``'<Label>:<id>'`` strings), with ``dist``."""
    ends = (
        "(labels(startNode(r))[0] + ':' + startNode(r).id) IN $kept AND "
        "(labels(endNode(r))[0] + ':' + endNode(r).id) IN $kept"
    )
    return (
        _paths(rel_types, max_hops, with_names, vis)
        + "UNWIND range(0, length(p) - 1) AS i WITH relationships(p)[i] AS r, i "
        f"WITH r, min(i) + 1 AS dist WHERE {ends} RETURN {rel_map('r')} AS rel, dist"
    )


def related_among(vis: Visibility) -> str:
    """RELATED edges whose two ends are both among the entity ids ``$ids`` and that some chunk
    ``vis`` sees supports, with ``support``, the number of such chunks."""
    return (
        "UNWIND $ids AS k MATCH (a:Entity {id: k}) "
        "WITH a MATCH (a)-[r:RELATED]->(b:Entity) WHERE b.id IN $ids "
        f"WITH r, {vis.support('r')} AS support WHERE support > 0 "
        f"RETURN {rel_map('r')} AS rel, support"
    )


def _lang(var: str, language: bool, joiner: str = "WHERE") -> str:
    """``var``'s language is ``$language``, or of its family (``$language_family``: ``'pt-'``
    for a bare ``pt``, else null)."""
    if not language:
        return ""
    return (
        f" {joiner} ({var}.lang = $language OR "
        f"({var}.lang STARTS WITH $language_family AND $language_family IS NOT NULL))"
    )


def topn_direct(language: bool, vis: Visibility) -> str:
    """Docs whose chunks mention the entities ``$keys``: best salience per (doc, entity);
    chunk and doc both seen by ``vis``. (``WITH q`` anchors the walk on the entity index:
    FalkorDB would otherwise start from a scan of every chunk the filter names.)"""
    return (
        "UNWIND $keys AS k MATCH (q:Entity {id: k}) "
        f"WITH q MATCH (q)<-[m:MENTIONS]-(c:Chunk) WHERE {vis.own('c')} "
        f"MATCH (c)-[:PART_OF]->(d:Doc) WHERE {vis.own('d')}{_lang('d', language, 'AND')} "
        "WITH d, q, max(coalesce(m.salience, 0.0)) AS s "
        "RETURN d.id AS doc_id, d.title AS title, d.updated_at AS updated_at, "
        "q.name AS entity, s AS salience LIMIT $cap"
    )


def topn_related(language: bool, vis: Visibility) -> str:
    """Docs mentioning an entity RELATED to one of ``$keys`` (one hop), with salience and the
    edge's ``support`` (chunks ``vis`` sees mentioning both ends; none: the edge is hidden),
    ``origin`` and stored ``weight`` (:func:`~trilha.graph.visibility.visible_weight`)."""
    return (
        "UNWIND $keys AS k MATCH (q:Entity {id: k}) WITH q MATCH (q)-[r:RELATED]-(e:Entity) "
        f"WHERE NOT e.id IN $keys WITH q, r, e, {vis.support('r')} AS n WHERE n > 0 "
        f"MATCH (e)<-[m:MENTIONS]-(c:Chunk) WHERE {vis.own('c')} "
        f"MATCH (c)-[:PART_OF]->(d:Doc) WHERE {vis.own('d')}{_lang('d', language, 'AND')} "
        "WITH d, q, e, r, n, max(coalesce(m.salience, 0.0)) AS s "
        "RETURN d.id AS doc_id, d.title AS title, d.updated_at AS updated_at, q.name AS entity, "
        "e.name AS via, r.weight AS weight, r.origin AS origin, n AS support, s AS salience "
        "LIMIT $cap"
    )


def topn_recent(language: bool, in_category: bool, vis: Visibility) -> str:
    """The most recently updated docs ``vis`` sees (optionally of category ``$category``)."""
    head = (
        "MATCH (d:Doc)-[:IN_CATEGORY]->(:Category {id: $category})"
        if in_category
        else "MATCH (d:Doc)"
    )
    return (
        f"{head} WHERE {vis.own('d')}{_lang('d', language, 'AND')} "
        "RETURN d.id AS doc_id, d.title AS title, "
        "d.updated_at AS updated_at ORDER BY coalesce(d.updated_at, '') DESC, doc_id LIMIT $cap"
    )


def categories_of() -> str:
    """Category ids of the docs ``$ids``."""
    return (
        "UNWIND $ids AS i MATCH (d:Doc {id: i})-[:IN_CATEGORY]->(c:Category) "
        "RETURN d.id AS doc_id, c.id AS category, c.name AS name"
    )
