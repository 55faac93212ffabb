"""Cypher of the KG boost: the evidence behind each chunk's stored prior, and the per-query read.

Every value is a ``$parameter``; the arithmetic happens in Python
(:mod:`trilha.graph.boost.score`, :mod:`trilha.graph.boost.prior`).
"""

from __future__ import annotations

from trilha.graph.model import check_label
from trilha.graph.visibility import Visibility


def entities_without_chunk_count() -> str:
    """Ids of entities with no ``chunks`` count or no access summary yet (written before they
    existed; read)."""
    return "MATCH (e:Entity) WHERE e.chunks IS NULL OR e.support_n IS NULL RETURN e.id AS id"


def chunk_count(vis: Visibility) -> str:
    """How many Chunk nodes ``vis`` sees (read)."""
    return f"MATCH (c:Chunk) WHERE {vis.own('c')} RETURN count(c) AS n"


def chunk_evidence() -> str:
    """Per chunk ``$ids``: the Criterio (with ``peso``), Fato and Prova nodes linked to it or to
    its Doc, and (``own_*``) those linked to the chunk itself (read). Feeds the stored priors
    (:func:`trilha.graph.boost.prior.evidence_prior`)."""

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
        + "RETURN uid, k1_d + k2_c AS criterios, f1_d + f2_c AS fatos, p1_d + p2_c AS provas, "
        "k2_c AS own_criterios, f2_c AS own_fatos, p2_c AS own_provas"
    )


def set_kg_prior() -> str:
    """Store each chunk's prior, from the evidence of the chunk and its Doc (``kg_prior``) and
    from the chunk's own (``kg_prior_own``; rows: ``{id, prior, own}``)."""
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.id}) "
        "SET c.kg_prior = row.prior, c.kg_prior_own = row.own"
    )


def chunks_without_prior() -> str:
    """Ids of chunks without their two priors yet (written before they existed; read)."""
    return "MATCH (c:Chunk) WHERE c.kg_prior IS NULL OR c.kg_prior_own IS NULL RETURN c.id AS id"


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


def any_evidence(vis: Visibility) -> str:
    """One row when some chunk ``vis`` sees has a positive KG prior as ``vis`` sees it (its own,
    or through a Doc it sees), none otherwise (read)."""
    return (
        f"MATCH (c:Chunk) WHERE c.kg_prior > 0 AND {vis.own('c')} "
        "OPTIONAL MATCH (c)-[:PART_OF]->(d:Doc) "
        f"WITH c, d WHERE c.kg_prior_own > 0 OR (d IS NOT NULL AND {vis.own('d')}) "
        "RETURN c.id AS id LIMIT 1"
    )


def kg_boost(with_entities: bool, vis: Visibility) -> str:
    """Per chunk ``$unit_ids`` that ``vis`` sees: its stored prior (``kg_prior`` when ``vis``
    sees its Doc, else ``kg_prior_own``: evidence reached through a hidden Doc does not count;
    the Doc is looked at only when the two differ)
    and, ``with_entities``, the entities of ``$entity_keys`` it mentions with their salience
    and how many chunks ``vis`` sees mention them (from their access summary,
    :mod:`trilha.graph.support`). One statement for the whole batch; the arithmetic happens in
    Python (:func:`trilha.graph.boost.score.raw_boost`)."""
    doc_seen = f"any(d IN [(c)-[:PART_OF]->(x:Doc) | x] WHERE {vis.own('d')})"
    head = (
        "UNWIND $unit_ids AS uid MATCH (c:Chunk {id: uid}) "
        f"WITH uid, c WHERE {vis.own('c')} "
        "WITH uid, c, CASE WHEN c.kg_prior = c.kg_prior_own THEN c.kg_prior "
        f"WHEN {doc_seen} THEN c.kg_prior ELSE c.kg_prior_own END AS prior "
    )
    if not with_entities:
        return head + "RETURN uid, prior"
    return (
        head + "OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity) WHERE e.id IN $entity_keys "
        f"WITH uid, prior, collect({{id: e.id, salience: m.salience, chunks: {vis.support('e')}}}) "
        "AS ents RETURN uid, prior, ents AS entities"
    )
