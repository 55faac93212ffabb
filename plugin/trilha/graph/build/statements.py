"""Cypher of the graph writes: upserts of docs, chunks, entities, mentions, co-occurrence and
record nodes/edges, document replacement and deletion, and the reads the writer needs.

Builders take allow-listed labels / relationship types only; every value (ids, names) is a
``$parameter`` and rows are sent with ``UNWIND $rows``.
"""

from __future__ import annotations

from trilha.graph.model import COOCCURRENCE_WEIGHT_CYPHER, check_label, check_rel_type
from trilha.graph.read.statements import node_map
from trilha.graph.support import BOTH_ENDS, refresh_entities, set_summary, summary_of


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
    """Set each entity's salience to its highest mention salience, ``chunks`` to the number of
    chunks mentioning it (its document frequency, read by the KG boost) and its access summary
    (:func:`trilha.graph.support.refresh_entities`; rows: entity ids)."""
    return refresh_entities()


def _cooccurrence(pattern: str, group: str) -> str:
    """From ``row.a``, ``row.b`` matched by ``pattern`` on: the chunks mentioning both grouped
    into the summary ``sig`` (:func:`trilha.graph.support.summary_of`) and their count ``n``."""
    return (
        f"UNWIND $rows AS row {pattern} {BOTH_ENDS}WITH DISTINCT {group}, c "
        + summary_of(group, carried=", sum(n) AS total")
        + f"WITH {group}, sig, toInteger(total) AS n "
    )


#: A co-occurrence edge's weight; a record's curated weight is kept.
_WEIGHT = f"CASE WHEN r.origin = 'record' THEN r.weight ELSE {COOCCURRENCE_WEIGHT_CYPHER} END"


def upsert_cooccurrence() -> str:
    """Merge RELATED a→b (a.id < b.id) from the chunks mentioning both, with its access summary
    (:mod:`trilha.graph.support`; rows: ``{a, b}``); a pair no chunk supports gets no edge.

    ``cooccurrence`` is the chunk count and ``weight`` is ``n/(n+1)``, except on edges written
    as explicit records, whose weight is kept.
    """
    return (
        _cooccurrence("MATCH (a:Entity {id: row.a}) MATCH (b:Entity {id: row.b})", "a, b")
        + "WHERE n > 0 MERGE (a)-[r:RELATED]->(b) "
        f"SET r.cooccurrence = n, r.weight = {_WEIGHT}, " + set_summary("r")
    )


def refresh_cooccurrence() -> str:
    """Recompute the RELATED edges between ``row.a`` and ``row.b`` that exist: their access
    summary, and, while a chunk mentions both ends, ``cooccurrence`` and ``weight`` as
    :func:`upsert_cooccurrence` does (rows: ``{a, b}``). Those left with an empty summary are
    then :func:`delete_unsupported` (apart: FalkorDB drops the SETs of rows a later WHERE
    filters out)."""
    return (
        _cooccurrence("MATCH (a:Entity {id: row.a})-[r:RELATED]-(b:Entity {id: row.b})", "r")
        + "SET "
        + set_summary("r")
        + ", r.cooccurrence = CASE WHEN n > 0 THEN n ELSE r.cooccurrence END, "
        f"r.weight = CASE WHEN n > 0 THEN {_WEIGHT} ELSE r.weight END"
    )


def delete_unsupported() -> str:
    """Delete the co-occurrence RELATED edges between ``row.a`` and ``row.b`` whose summary is
    empty: no chunk mentions both ends any more (record edges stay; rows: ``{a, b}``)."""
    return (
        "UNWIND $rows AS row MATCH (a:Entity {id: row.a})-[r:RELATED]-(b:Entity {id: row.b}) "
        "WHERE size(r.support_n) = 0 AND coalesce(r.origin, '') <> 'record' DELETE r"
    )


def pairs_losing() -> str:
    """``{a, b}`` (``a`` the entity lost) of the RELATED edges a chunk ``row.id`` stops
    supporting when its extracted MENTIONS not in ``row.keep`` go (:func:`delete_stale_mentions`;
    read, run before it)."""
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.id})-[m:MENTIONS]->(a:Entity) "
        "WHERE NOT a.id IN row.keep AND coalesce(m.origin, '') <> 'record' "
        "MATCH (a)-[:RELATED]-(b:Entity) WHERE (c)-[:MENTIONS]->(b) "
        "RETURN DISTINCT a.id AS a, b.id AS b"
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


def node_by_id(label: str) -> str:
    """``{label, props}`` of the ``label`` nodes whose ids are in ``$ids``."""
    return (
        f"UNWIND $ids AS k MATCH (n:{check_label(label)} {{id: k}}) "
        f"RETURN {node_map('n', None)} AS node"
    )


def without_access(label: str) -> str:
    """One id of a ``label`` node stored without access fields (before issue 8), if any."""
    return f"MATCH (n:{check_label(label)}) WHERE n.acl IS NULL RETURN n.id AS id LIMIT 1"


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
