"""Cypher of the KG boost: the evidence behind each chunk's stored prior, and the per-query read.

Every value is a ``$parameter``; the arithmetic happens in Python
(:mod:`trilha.graph.boost.score`, :mod:`trilha.graph.boost.prior`).
"""

from __future__ import annotations

from trilha.graph.model import check_label


def entities_without_chunk_count() -> str:
    """Ids of entities with no ``chunks`` count or no access summary yet (written before they
    existed; read)."""
    return "MATCH (e:Entity) WHERE e.chunks IS NULL OR e.support_n IS NULL RETURN e.id AS id"


def chunk_count() -> str:
    """How many Chunk nodes the graph holds (read)."""
    return "MATCH (c:Chunk) RETURN count(c) AS n"


def chunk_evidence() -> str:
    """Per chunk ``$ids``: the Criterio (with ``peso``), Fato and Prova nodes linked to it or to
    its Doc (read). Feeds the stored prior (:func:`trilha.graph.boost.prior.evidence_prior`)."""

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


def any_evidence() -> str:
    """One row when some chunk has a positive KG prior, none otherwise (read)."""
    return "MATCH (c:Chunk) WHERE c.kg_prior > 0 RETURN c.id AS id LIMIT 1"


def kg_boost(with_entities: bool) -> str:
    """Per chunk ``$unit_ids``: its stored ``kg_prior`` and, ``with_entities``, the entities of
    ``$entity_keys`` it mentions with their salience and stored chunk count. One statement for
    the whole batch; the arithmetic happens in Python
    (:func:`trilha.graph.boost.score.raw_boost`)."""
    head = "UNWIND $unit_ids AS uid MATCH (c:Chunk {id: uid}) "
    if not with_entities:
        return head + "RETURN uid, c.kg_prior AS prior"
    return (
        head + "OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity) WHERE e.id IN $entity_keys "
        "WITH uid, c, collect({id: e.id, salience: m.salience, chunks: e.chunks}) AS ents "
        "RETURN uid, c.kg_prior AS prior, ents AS entities"
    )
