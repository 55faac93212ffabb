"""Top-N document ranking (seed 003 §3), as pure functions over the evidence the graph returned.

For each candidate document::

    relevance = Σ best salience of each query entity it mentions
              + 0.5 × Σ (weight × salience) of entities RELATED to a query entity it mentions
    score     = w_rel × relevance / max relevance     (0 when no candidate has any)
              + w_rec × recency                        ((t − t_min) / (t_max − t_min); 1 if equal;
                                                        0 when updated_at is missing/unparsable)
              + w_cat × [category matches]

Defaults: w_rel 0.6, w_rec 0.3, w_cat 0.1. Ties: newer first, then doc_id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from trilha.graph.results import TopNItem

RELATED_FACTOR = 0.5


class TopNWeights(BaseModel):
    """Shares of relevance, recency and category match in the score."""

    relevance: float = Field(0.6, ge=0, description="Share of normalised entity relevance.")
    recency: float = Field(0.3, ge=0, description="Share of normalised recency.")
    category: float = Field(0.1, ge=0, description="Bonus when the category matches.")


@dataclass
class DocEvidence:
    """What the graph said about one candidate document."""

    doc_id: str
    title: str | None = None
    updated_at: str | None = None
    direct: dict[str, float] = field(default_factory=dict)
    related: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    categories: dict[str, str] = field(default_factory=dict)


REASONS: dict[str, dict[str, str]] = {
    "en": {
        "direct": "mentions entity {name} (salience {value:.2f})",
        "related": "related to {name} via {via} (weight {value:.2f})",
        "recent": "updated {date}",
        "category": "category match: {category}",
    },
    "pt": {
        "direct": "menciona a entidade {name} (saliência {value:.2f})",
        "related": "relacionado a {name} via {via} (peso {value:.2f})",
        "recent": "atualizado em {date}",
        "category": "categoria corresponde: {category}",
    },
    "zh": {
        "direct": "包含实体 {name}（salience {value:.2f}）",
        "related": "通过 {via} 关联 {name}（权重 {value:.2f}）",
        "recent": "最近更新：{date}",
        "category": "分类匹配 {category}",
    },
}


def timestamp(value: str | None) -> float | None:
    """Seconds since the epoch of an ISO date/datetime (naive means UTC); None if unparsable."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def relevance(ev: DocEvidence) -> float:
    """Direct salience sum plus half the related weight × salience sum."""
    related = sum(w * s for w, s in ev.related.values())
    return sum(ev.direct.values()) + RELATED_FACTOR * related


def recency(times: list[float | None]) -> list[float]:
    """Min-max normalised timestamps; 1.0 for all when they are equal, 0.0 when missing."""
    known = [t for t in times if t is not None]
    if not known:
        return [0.0] * len(times)
    lo, hi = min(known), max(known)
    return [0.0 if t is None else (1.0 if hi == lo else (t - lo) / (hi - lo)) for t in times]


def rank(
    evidence: list[DocEvidence],
    category_key: str | None,
    lang: str | None,
    weights: TopNWeights | None = None,
) -> list[TopNItem]:
    """Score and order candidates; reasons in ``lang`` ('en', 'pt', 'zh'; else English)."""
    w = weights or TopNWeights()
    rel = [relevance(e) for e in evidence]
    top = max(rel, default=0.0)
    rec = recency([timestamp(e.updated_at) for e in evidence])
    items = []
    for ev, r, t in zip(evidence, rel, rec, strict=True):
        match = category_key is not None and category_key in ev.categories
        score = w.relevance * (r / top if top > 0 else 0.0) + w.recency * t + w.category * match
        items.append(
            TopNItem(
                doc_id=ev.doc_id,
                title=ev.title,
                updated_at=ev.updated_at,
                score=round(score, 4),
                reasons=reasons(ev, category_key, lang),
            )
        )
    items.sort(key=lambda i: (-i.score, -(timestamp(i.updated_at) or 0.0), i.doc_id))
    return items


def reasons(ev: DocEvidence, category_key: str | None, lang: str | None) -> list[str]:
    """Readable reasons: direct mentions, related entities, update date, category match."""
    text = REASONS.get((lang or "en").lower()[:2], REASONS["en"])
    out = [
        text["direct"].format(name=n, value=s)
        for n, s in sorted(ev.direct.items(), key=lambda x: (-x[1], x[0]))
    ]
    out += [
        text["related"].format(name=q, via=via, value=w)
        for (q, via), (w, _) in sorted(ev.related.items(), key=lambda x: (-x[1][0], x[0]))
    ]
    if ev.updated_at:
        out.append(text["recent"].format(date=ev.updated_at[:10]))
    if category_key is not None and category_key in ev.categories:
        out.append(text["category"].format(category=ev.categories[category_key]))
    return out
