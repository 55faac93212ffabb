"""Claim search (seed 004 REQ-RETR-030, the ``claims`` memory class of depth D3).

A :class:`~trilha.graph.model` ``Claim`` states something with a confidence, a source and a
validity. :func:`search_claims` reads the claims the caller sees that hold now (valid_from on or
before today, valid_to on or after it, expires_at after now) and whose text contains one of the
terms (case- and accent-insensitively, :func:`~trilha.graph.read.profile_query.fold`), and
ranks them by ``share of the terms contained × confidence`` (a claim without a confidence
counts :data:`DEFAULT_CONFIDENCE`). Without terms every valid claim matches and the confidence
alone ranks them. Ties: the most recent first, then the id.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from trilha.access import Principal
from trilha.graph.model import display_id
from trilha.graph.read import profile_statements as cypher
from trilha.graph.read.profile_query import ProfileQuery, fold
from trilha.graph.read.profile_rank import term_overlap
from trilha.graph.read.profile_results import ClaimHit, ClaimSearchResult
from trilha.graph.read.profile_texts import present
from trilha.graph.read.profile_walk import MAX_SCANNED
from trilha.graph.read.validation import MAX_LIMIT, bounded
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility

#: The confidence of a claim that states none.
DEFAULT_CONFIDENCE = 0.5


def search_claims(
    store: GraphStore,
    terms: Sequence[str],
    *,
    principal: Principal | None = None,
    now: datetime,
    limit: int = 10,
    max_nodes_scanned: int = 500,
    timeout_s: float | None = None,
) -> ClaimSearchResult:
    """The claims ``principal`` sees that hold at ``now`` and contain one of ``terms``, best
    first (module docstring), at most ``limit``, having read at most ``max_nodes_scanned``."""
    notes: list[str] = []
    cap = bounded("limit", limit, 1, MAX_LIMIT, notes)
    budget = bounded("max_nodes_scanned", max_nodes_scanned, 1, MAX_SCANNED, notes)
    query = ProfileQuery(today=now.date(), now=now, terms=tuple(terms))
    vis = Visibility.of(principal)
    filters = cypher.query_filters(query, validity=True)
    params = {**vis.params, **cypher.filter_params(query), "scan": budget + 1}
    rows = store.run(cypher.anchors("Claim", filters, vis), params, timeout_s=timeout_s)
    found = [present(r["props"]) for r in rows[:budget]]
    folded = [fold(t) for t in query.terms]
    ranked = sorted(((_score(p, folded), p) for p in found), key=lambda x: str(x[1]["id"]))
    ranked.sort(key=lambda x: str(x[1].get("created_at") or ""), reverse=True)
    ranked.sort(key=lambda x: x[0], reverse=True)
    ranked = ranked[:cap]
    mentions = _mentions(store, [str(p["id"]) for _, p in ranked], timeout_s)
    hits = tuple(_hit(value, p, mentions.get(str(p["id"]), ())) for value, p in ranked)
    return ClaimSearchResult(
        hits=hits, candidates=len(found), nodes_scanned=len(found), truncated=len(rows) > budget
    )


def _score(props: dict[str, Any], terms: Sequence[str]) -> float:
    """Share of ``terms`` contained (1 without terms) × confidence."""
    share = term_overlap(props, terms) if terms else 1.0
    confidence = props.get("confidence")
    weight = float(confidence) if isinstance(confidence, int | float) else DEFAULT_CONFIDENCE
    return share * weight


def _mentions(
    store: GraphStore, ids: list[str], timeout_s: float | None
) -> dict[str, tuple[str, ...]]:
    if not ids:
        return {}
    out: dict[str, list[str]] = {}
    for r in store.run(cypher.claim_mentions(), {"ids": ids}, timeout_s=timeout_s):
        out.setdefault(r["claim"], []).append(str(r["name"]))
    return {k: tuple(v) for k, v in out.items()}


def _hit(value: float, props: dict[str, Any], entities: tuple[str, ...]) -> ClaimHit:
    def text(key: str) -> str | None:
        v = props.get(key)
        return None if v is None else str(v)

    confidence = props.get("confidence")
    return ClaimHit(
        node_id=display_id("Claim", props),
        text=text("text") or "",
        confidence=float(confidence) if isinstance(confidence, int | float) else None,
        source_ref=text("source_ref"),
        created_at=text("created_at"),
        valid_from=text("valid_from"),
        valid_to=text("valid_to"),
        expires_at=text("expires_at"),
        owner_id=text("owner_id"),
        score=round(value, 6),
        entities=entities,
    )
