"""Top-N documents for entities and a category (seed 003 §3), over what ``principal`` may see.

The evidence (direct mentions, RELATED neighbours, recent documents of the category) is read by
parametrised Cypher (:mod:`trilha.graph.read.statements`) with the principal's rule inside it,
then ranked by :mod:`trilha.graph.read.ranking`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trilha.access import Principal
from trilha.graph.model import normalise_name
from trilha.graph.read import statements as cypher
from trilha.graph.read.ranking import DocEvidence, TopNWeights, rank, template_lang
from trilha.graph.read.results import (
    TopNMeta,
    TopNQuery,
    TopNResult,
)
from trilha.graph.read.validation import (
    MAX_LIMIT,
    bounded,
    text_arg,
)
from trilha.graph.read.validation import entity_names as check_names
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility, visible_weight
from trilha.index.language import written_code


def topn(
    store: GraphStore,
    entity_names: Sequence[str] | None = None,
    category: str | None = None,
    language: str | None = None,
    limit: int = 5,
    *,
    reasons_lang: str = "en",
    weights: TopNWeights | None = None,
    timeout_s: float | None = None,
    principal: Principal | None = None,
) -> TopNResult:
    """Documents ranked by entity relevance, recency and category match (seed 003 §3).

    Candidates: documents whose chunks mention a query entity or an entity RELATED to one;
    without entity names, the most recent documents (and those of ``category``). ``language``
    filters documents; ``category`` earns a bonus; the reasons are written in the template
    language ``reasons_lang`` ('en', 'pt', 'zh'), whatever the documents' language. Only
    documents and chunks ``principal`` sees are candidates, and only RELATED edges a chunk it
    sees supports are reasons (weighted by those chunks).
    """
    vis = Visibility.of(principal)
    template = template_lang(reasons_lang)
    notes: list[str] = []
    cap_items = bounded("limit", limit, 1, MAX_LIMIT, notes)
    names, keys = check_names(entity_names)
    cat = text_arg("category", category) if category is not None else None
    # as the graph stores a Doc's lang (lower case); a bare code finds its family (pt: pt-br)
    lang = written_code(text_arg("language", language)).lower() if language is not None else None
    cap = min(max(cap_items * 20, 200), 5_000)
    params: dict[str, Any] = {**vis.params, "keys": keys, "cap": cap, "language": lang}
    params["language_family"] = f"{lang}-" if lang is not None and "-" not in lang else None
    statements = _statements(vis, keys, cat, lang is not None, params)
    found, rows_seen = _gathered(store, statements, timeout_s)
    items = rank(list(found.values()), normalise_name(cat) if cat else None, template, weights)
    truncated = rows_seen >= cap or len(items) > cap_items
    meta = TopNMeta(limit=cap_items, candidates=len(items), truncated=truncated, notes=notes)
    query = TopNQuery(entity_names=names, category=category, language=language)
    return TopNResult(items=items[:cap_items], query=query, meta=meta)


def _statements(
    vis: Visibility,
    keys: list[str],
    category: str | None,
    language: bool,
    params: dict[str, Any],
) -> list[tuple[str, dict[str, Any]]]:
    """The evidence reads and their parameters: direct mentions and RELATED neighbours of the
    entities ``keys``; without any, the most recent documents (and those of ``category``)."""
    if keys:
        return [
            (cypher.topn_direct(language, vis), params),
            (cypher.topn_related(language, vis), params),
        ]
    queries = [(cypher.topn_recent(language, False, vis), params)]
    if category is not None:
        in_category = {**params, "category": normalise_name(category)}
        queries.append((cypher.topn_recent(language, True, vis), in_category))
    return queries


def _gathered(
    store: GraphStore, statements: list[tuple[str, dict[str, Any]]], timeout_s: float | None
) -> tuple[dict[str, DocEvidence], int]:
    """The evidence per document from ``statements``, with their categories, and the most rows
    one statement returned (to tell whether its cap cut it)."""
    found: dict[str, DocEvidence] = {}
    rows_seen = 0
    for statement, params in statements:
        rows = store.run(statement, params, timeout_s=timeout_s)
        rows_seen = max(rows_seen, len(rows))
        for r in rows:
            _evidence(found, r)
    if found:
        for r in store.run(cypher.categories_of(), {"ids": sorted(found)}, timeout_s=timeout_s):
            found[r["doc_id"]].categories[r["category"]] = r["name"] or r["category"]
    return found, rows_seen


def _evidence(found: dict[str, DocEvidence], r: dict[str, Any]) -> None:
    ev = found.setdefault(
        r["doc_id"], DocEvidence(r["doc_id"], r.get("title"), r.get("updated_at"))
    )
    if "via" in r:
        key = (r["entity"], r["via"])
        weight = visible_weight({"origin": r.get("origin"), "weight": r["weight"]}, r["support"])
        value = (float(weight or 0.0), float(r["salience"] or 0.0))
        old = ev.related.get(key)
        if old is None or value[0] * value[1] > old[0] * old[1]:
            ev.related[key] = value
    elif "entity" in r:
        ev.direct[r["entity"]] = max(ev.direct.get(r["entity"], -math.inf), float(r["salience"]))
