"""Pure Cypher builders: every statement trilha sends, apart from the I/O that sends it.

Builders take allow-listed labels / relationship types and validated ints only; every value
(ids, names, limits, languages) is a ``$parameter``. Each returns a string; the callers pass the
parameters. Graph objects are projected to maps here (``{label, props}``, ``{type, s_label,
s_id, t_label, t_id, props}``) so backends return plain dicts.

Every read of what a caller may see takes a :class:`~trilha.graph.visibility.Visibility` and
embeds its fragments (the caller passes ``vis.params`` with the other parameters), so the
principal's rule runs inside the statement, before any ``LIMIT``.
"""

from __future__ import annotations

from collections.abc import Sequence

from trilha.graph.dialect import Dialect, shortest_path_clause
from trilha.graph.model import COOCCURRENCE_WEIGHT_CYPHER, check_label, check_rel_type
from trilha.graph.visibility import Visibility


def node_map(var: str) -> str:
    """``{label, props}`` of node ``var``."""
    return f"{{label: labels({var})[0], props: properties({var})}}"


def rel_map(var: str) -> str:
    """``{type, s_label, s_id, t_label, t_id, props}`` of relationship ``var``."""
    return (
        f"{{type: type({var}), s_label: labels(startNode({var}))[0], s_id: startNode({var}).id, "
        f"t_label: labels(endNode({var}))[0], t_id: endNode({var}).id, props: properties({var})}}"
    )


def _types(rel_types: Sequence[str]) -> str:
    return "|".join(check_rel_type(t) for t in rel_types)


# --- writes -------------------------------------------------------------------------------


def upsert_nodes(label: str) -> str:
    """Merge ``label`` nodes by id and set their properties (rows: ``{id, props}``)."""
    return f"UNWIND $rows AS row MERGE (n:{check_label(label)} {{id: row.id}}) SET n += row.props"


def upsert_entities() -> str:
    """Merge extracted entities; a specific type replaces the generic 'Concept'.

    Rows: ``{id, name, type}``.
    """
    return (
        "UNWIND $rows AS row MERGE (e:Entity {id: row.id}) "
        "ON CREATE SET e.name = row.name, e.origin = 'text' "
        "SET e.type = CASE WHEN e.type IS NULL OR e.type = 'Concept' THEN row.type "
        "ELSE e.type END"
    )


def upsert_chunks() -> str:
    """Merge chunks and their PART_OF edge (rows: ``{id, doc_id, props}``)."""
    return (
        "UNWIND $rows AS row MERGE (c:Chunk {id: row.id}) SET c += row.props "
        "WITH c, row MATCH (d:Doc {id: row.doc_id}) MERGE (c)-[:PART_OF]->(d)"
    )


def link_doc(label: str, rel_type: str) -> str:
    """Merge named ``label`` nodes and link a Doc to them (rows: ``{doc, id, name}``)."""
    return (
        f"UNWIND $rows AS row MATCH (d:Doc {{id: row.doc}}) "
        f"MERGE (t:{check_label(label)} {{id: row.id}}) "
        "ON CREATE SET t.name = row.name, t.origin = 'text' "
        f"MERGE (d)-[:{check_rel_type(rel_type)}]->(t)"
    )


def unlink_doc_stale(label: str, rel_type: str) -> str:
    """Delete a Doc's ``rel_type`` edges to ``label`` nodes not in ``row.keep``; their ids."""
    return (
        f"UNWIND $rows AS row MATCH (d:Doc {{id: row.doc}})-[r:{check_rel_type(rel_type)}]->"
        f"(t:{check_label(label)}) WHERE NOT t.id IN row.keep DELETE r RETURN DISTINCT t.id AS id"
    )


def delete_stale_mentions() -> str:
    """Delete a chunk's extracted MENTIONS not in ``row.keep`` (record-origin ones stay);
    returns the entity ids touched."""
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.id})-[m:MENTIONS]->(e:Entity) "
        "WHERE NOT e.id IN row.keep AND coalesce(m.origin, '') <> 'record' "
        "DELETE m RETURN DISTINCT e.id AS id"
    )


def upsert_mentions() -> str:
    """Merge MENTIONS with salience and count (rows: ``{chunk, entity, salience, count}``)."""
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.chunk}) MATCH (e:Entity {id: row.entity}) "
        "MERGE (c)-[m:MENTIONS]->(e) SET m.salience = row.salience, m.count = row.count"
    )


def refresh_entity_salience() -> str:
    """Set each entity's salience to its highest mention salience and ``chunks`` to the number
    of chunks mentioning it (its document frequency, read by the KG boost; rows: entity ids)."""
    return (
        "UNWIND $rows AS k MATCH (e:Entity {id: k}) OPTIONAL MATCH (e)<-[m:MENTIONS]-(:Chunk) "
        "WITH e, max(m.salience) AS s, count(m) AS n "
        "SET e.salience = coalesce(s, e.salience, 0.0), e.chunks = n"
    )


def entities_without_chunk_count() -> str:
    """Ids of entities with no ``chunks`` count yet (written before counts existed; read)."""
    return "MATCH (e:Entity) WHERE e.chunks IS NULL RETURN e.id AS id"


def chunk_count() -> str:
    """How many Chunk nodes the graph holds (read)."""
    return "MATCH (c:Chunk) RETURN count(c) AS n"


_COOC = (
    "OPTIONAL MATCH (a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b) "
    "WITH a, b, r, count(DISTINCT c) AS n"
)


def upsert_cooccurrence() -> str:
    """Merge RELATED a→b (a.id < b.id) from the chunks mentioning both (rows: ``{a, b}``).

    ``cooccurrence`` is the chunk count and ``weight`` is ``n/(n+1)``, except on edges written
    as explicit records, whose weight is kept.
    """
    return (
        "UNWIND $rows AS row MATCH (a:Entity {id: row.a}) MATCH (b:Entity {id: row.b}) "
        "OPTIONAL MATCH (a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b) "
        "WITH a, b, count(DISTINCT c) AS n WHERE n > 0 "
        "MERGE (a)-[r:RELATED]->(b) SET r.cooccurrence = n, r.weight = CASE WHEN "
        f"r.origin = 'record' THEN r.weight ELSE {COOCCURRENCE_WEIGHT_CYPHER} END"
    )


def related_pairs_of() -> str:
    """Co-occurrence RELATED pairs touching the entities in ``$ids`` (read)."""
    return (
        "UNWIND $ids AS k MATCH (a:Entity {id: k})-[r:RELATED]-(b:Entity) "
        "WHERE coalesce(r.origin, '') <> 'record' RETURN DISTINCT a.id AS a, b.id AS b"
    )


def delete_dead_cooccurrence() -> str:
    """Delete co-occurrence RELATED a→b edges no chunk supports any more (rows: ``{a, b}``)."""
    return (
        "UNWIND $rows AS row MATCH (a:Entity {id: row.a})-[r:RELATED]->(b:Entity {id: row.b}) "
        f"WHERE coalesce(r.origin, '') <> 'record' {_COOC} WHERE n = 0 DELETE r"
    )


def orphans(label: str, rel_type: str) -> str:
    """Ids in ``$ids`` of ``label`` nodes with no incoming ``rel_type`` left (read)."""
    return (
        f"UNWIND $ids AS k MATCH (e:{check_label(label)} {{id: k}}) "
        f"OPTIONAL MATCH (e)<-[m:{check_rel_type(rel_type)}]-() WITH e, count(m) AS n "
        "WHERE n = 0 AND coalesce(e.origin, '') <> 'record' RETURN e.id AS id"
    )


def delete_nodes(label: str) -> str:
    """Detach-delete the ``label`` nodes whose ids are in ``$ids``."""
    return f"UNWIND $ids AS k MATCH (n:{check_label(label)} {{id: k}}) DETACH DELETE n"


def doc_chunk_ids() -> str:
    """Ids of a document's chunks, by ``doc_id`` property and by PART_OF (read)."""
    return (
        "MATCH (a:Chunk {doc_id: $doc_id}) RETURN a.id AS id UNION "
        "MATCH (b:Chunk)-[:PART_OF]->(:Doc {id: $doc_id}) RETURN b.id AS id"
    )


def mentioned_by() -> str:
    """Ids of the entities the chunks in ``$ids`` mention (read)."""
    return (
        "UNWIND $ids AS i MATCH (:Chunk {id: i})-[:MENTIONS]->(e:Entity) RETURN DISTINCT e.id AS id"
    )


def doc_links() -> str:
    """Tags and categories of document ``$doc_id`` (read)."""
    return (
        "MATCH (:Doc {id: $doc_id})-[:HAS_TAG|IN_CATEGORY]->(t) "
        "RETURN labels(t)[0] AS label, t.id AS id"
    )


def upsert_edges(rel_type: str, source_label: str, target_label: str) -> str:
    """Merge explicit edges and their endpoints, which become ``origin = 'record'`` (kept
    when no chunk mentions them any more).

    Rows: ``{source, target, s_name, t_name, props}``.
    """
    s, t, r = check_label(source_label), check_label(target_label), check_rel_type(rel_type)
    return (
        f"UNWIND $rows AS row MERGE (a:{s} {{id: row.source}}) "
        "ON CREATE SET a.name = row.s_name SET a.origin = 'record' "
        f"MERGE (b:{t} {{id: row.target}}) ON CREATE SET b.name = row.t_name "
        "SET b.origin = 'record' "
        f"MERGE (a)-[e:{r}]->(b) SET e += row.props"
    )


# --- reads --------------------------------------------------------------------------------


def node_by_id(label: str) -> str:
    """``{label, props}`` of the ``label`` nodes whose ids are in ``$ids``."""
    return (
        f"UNWIND $ids AS k MATCH (n:{check_label(label)} {{id: k}}) RETURN {node_map('n')} AS node"
    )


def visible_nodes(label: str, vis: Visibility) -> str:
    """``{label, props}`` of the own-labelled ``label`` nodes in ``$ids`` that ``vis`` sees."""
    return (
        f"UNWIND $ids AS k MATCH (n:{check_label(label)} {{id: k}}) WHERE {vis.own('n')} "
        f"RETURN {node_map('n')} AS node"
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
        f"RETURN {node_map('x')} AS node, dist, paths"
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
        "UNWIND $ids AS k MATCH (a:Entity {id: k})-[r:RELATED]->(b:Entity) WHERE b.id IN $ids "
        f"WITH a, r, b, {vis.support('a', 'b')} AS support WHERE support > 0 "
        f"RETURN {rel_map('r')} AS rel, support"
    )


def shortest_path(dialect: Dialect, rel_types: Sequence[str], max_length: int) -> str:
    """One shortest undirected path between Entities ``$source`` and ``$target``."""
    clause = shortest_path_clause(dialect, tuple(rel_types), int(max_length))
    return (
        "MATCH (src:Entity {id: $source}) MATCH (dst:Entity {id: $target}) "
        f"{clause} RETURN [x IN nodes(path) | {node_map('x')}] AS nodes, "
        f"[r IN relationships(path) | {rel_map('r')}] AS rels LIMIT 1"
    )


def _lang(var: str, language: bool, joiner: str = "WHERE") -> str:
    return f" {joiner} {var}.lang = $language" if language else ""


def topn_direct(language: bool, vis: Visibility) -> str:
    """Docs whose chunks mention the entities ``$keys``: best salience per (doc, entity);
    chunk and doc both seen by ``vis``."""
    return (
        "UNWIND $keys AS k MATCH (q:Entity {id: k})<-[m:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Doc) "
        f"WHERE {vis.own('c')} AND {vis.own('d')}{_lang('d', language, 'AND')} "
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
        f"WHERE NOT e.id IN $keys WITH q, r, e, {vis.support('q', 'e')} AS n WHERE n > 0 "
        "MATCH (e)<-[m:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Doc) "
        f"WHERE {vis.own('c')} AND {vis.own('d')}{_lang('d', language, 'AND')} "
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


def chunk_evidence() -> str:
    """Per chunk ``$ids``: the Criterio (with ``peso``), Fato and Prova nodes linked to it or to
    its Doc (read). Feeds the stored prior (:func:`trilha.graph.prior.evidence_prior`)."""

    def part(var: str, rel: str, label: str, alias: str, carried: str, value: str) -> str:
        return (
            f"OPTIONAL MATCH ({var})-[{alias}r:{rel}]->({alias}:{label}) "
            f"WITH uid, c, d{carried}, collect({value}) AS {alias}_{var} "
        )

    crit = "{id: %s.id, peso: coalesce(%sr.peso, %s.peso)}"
    return (
        "UNWIND $ids AS uid MATCH (c:Chunk {id: uid}) OPTIONAL MATCH (c)-[:PART_OF]->(d:Doc) "
        "WITH uid, c, d "
        + part("d", "HAS_CRITERIO", "Criterio", "k1", "", crit % ("k1", "k1", "k1"))
        + part("c", "HAS_CRITERIO", "Criterio", "k2", ", k1_d", crit % ("k2", "k2", "k2"))
        + part("d", "HAS_FATO", "Fato", "f1", ", k1_d, k2_c", "f1.id")
        + part("c", "HAS_FATO", "Fato", "f2", ", k1_d, k2_c, f1_d", "f2.id")
        + part("d", "HAS_PROVA", "Prova", "p1", ", k1_d, k2_c, f1_d, f2_c", "p1.id")
        + part("c", "HAS_PROVA", "Prova", "p2", ", k1_d, k2_c, f1_d, f2_c, p1_d", "p2.id")
        + "RETURN uid, k1_d + k2_c AS criterios, f1_d + f2_c AS fatos, p1_d + p2_c AS provas"
    )


def set_kg_prior() -> str:
    """Store each chunk's prior (rows: ``{id, prior}``)."""
    return "UNWIND $rows AS row MATCH (c:Chunk {id: row.id}) SET c.kg_prior = row.prior"


def chunks_without_prior() -> str:
    """Ids of chunks that have no ``kg_prior`` yet (written before priors existed; read)."""
    return "MATCH (c:Chunk) WHERE c.kg_prior IS NULL RETURN c.id AS id"


def without_access(label: str) -> str:
    """One id of a ``label`` node stored without access fields (before issue 8), if any."""
    return f"MATCH (n:{check_label(label)}) WHERE n.acl IS NULL RETURN n.id AS id LIMIT 1"


def chunks_of_docs() -> str:
    """Ids of the chunks of the docs ``$ids`` (read)."""
    return "UNWIND $ids AS k MATCH (c:Chunk)-[:PART_OF]->(:Doc {id: k}) RETURN c.id AS id"


def chunks_citing(label: str) -> str:
    """Ids of the chunks linked to the ``label`` nodes ``$ids``, directly or via their Doc
    (read)."""
    head = f"UNWIND $ids AS k MATCH (x:{check_label(label)} {{id: k}})"
    return (
        f"{head}<-[]-(a:Chunk) RETURN a.id AS id UNION "
        f"{head}<-[]-(:Doc)<-[:PART_OF]-(b:Chunk) RETURN b.id AS id"
    )


def all_ids(label: str) -> str:
    """Ids of every ``label`` node (read)."""
    return f"MATCH (n:{check_label(label)}) RETURN n.id AS id"


def chunk_docs() -> str:
    """``{id, doc}`` of the chunks ``$ids`` that exist: the Doc they are PART_OF, else their
    ``doc_id`` property (read)."""
    return (
        "UNWIND $ids AS k MATCH (c:Chunk {id: k}) OPTIONAL MATCH (c)-[:PART_OF]->(d:Doc) "
        "RETURN c.id AS id, coalesce(d.id, c.doc_id) AS doc"
    )


def record_edges_of_chunks(outgoing: bool) -> str:
    """Record-origin relationships leaving (``outgoing``) or entering the chunks ``$ids``:
    ``{type, label, id, props}`` of the other end (read)."""
    pattern = "(c)-[r]->(x)" if outgoing else "(x)-[r]->(c)"
    return (
        f"UNWIND $ids AS k MATCH (c:Chunk {{id: k}}) MATCH {pattern} "
        "WHERE r.origin = 'record' "
        "RETURN type(r) AS type, labels(x)[0] AS label, x.id AS id, properties(r) AS props"
    )


def attach_to_doc(rel_type: str, label: str, outgoing: bool) -> str:
    """Merge ``rel_type`` between Doc ``$doc`` and the ``label`` nodes ``row.id``, leaving the
    Doc when ``outgoing``, and set ``row.props`` (rows: ``{id, props}``)."""
    rel, other = check_rel_type(rel_type), check_label(label)
    pattern = f"(d)-[e:{rel}]->(x)" if outgoing else f"(x)-[e:{rel}]->(d)"
    return (
        f"UNWIND $rows AS row MATCH (d:Doc {{id: $doc}}) MATCH (x:{other} {{id: row.id}}) "
        f"MERGE {pattern} SET e += row.props"
    )


def any_evidence() -> str:
    """One row when some chunk has a positive KG prior, none otherwise (read)."""
    return "MATCH (c:Chunk) WHERE c.kg_prior > 0 RETURN c.id AS id LIMIT 1"


def kg_boost(with_entities: bool) -> str:
    """Per chunk ``$unit_ids``: its stored ``kg_prior`` and, ``with_entities``, the entities of
    ``$entity_keys`` it mentions with their salience and stored chunk count. One statement for
    the whole batch; the arithmetic happens in Python (:func:`trilha.graph.boost.raw_boost`)."""
    head = "UNWIND $unit_ids AS uid MATCH (c:Chunk {id: uid}) "
    if not with_entities:
        return head + "RETURN uid, c.kg_prior AS prior"
    return (
        head + "OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity) WHERE e.id IN $entity_keys "
        "WITH uid, c, collect({id: e.id, salience: m.salience, chunks: e.chunks}) AS ents "
        "RETURN uid, c.kg_prior AS prior, ents AS entities"
    )
