"""Top-N document ranking (seed 003 §3), as pure functions over the evidence the graph returned.

For each candidate document::

    relevance = Σ best salience of each query entity it mentions
              + 0.5 × Σ (weight × salience) of entities RELATED to a query entity it mentions
    score     = w_rel × relevance / max relevance     (0 when no candidate has any)
              + w_rec × recency                        ((t − t_min) / (t_max − t_min); 1 if equal;
                                                        0 when updated_at is missing/unparsable)
              + w_cat × [category matches]

Defaults: w_rel 0.6, w_rec 0.3, w_cat 0.1. Ties: newer first, then doc_id.

Reasons are written in a template language (en, pt, zh: seed 003's ``包含实体 …``, ``最近更新：…``,
``分类匹配 …``), chosen apart from the document-language filter. An item has at most
:data:`MAX_REASONS`: the update date and the category match when there are such, and the
strongest entity links in the remaining places (the last one says how many more there are);
names longer than :data:`MAX_NAME` characters end in an ellipsis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from trilha.errors import BadRequestError
from trilha.graph.read.results import TopNItem, iso_utc

RELATED_FACTOR = 0.5
MAX_REASONS = 3
MAX_NAME = 24


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
        "more": "{reason} (+{n} more)",
    },
    "pt": {
        "direct": "menciona a entidade {name} (saliência {value:.2f})",
        "related": "relacionado a {name} via {via} (peso {value:.2f})",
        "recent": "atualizado em {date}",
        "category": "categoria corresponde: {category}",
        "more": "{reason} (+{n} outras)",
    },
    "zh": {
        "direct": "包含实体 {name}（salience {value:.2f}）",
        "related": "通过 {via} 关联 {name}（权重 {value:.2f}）",
        "recent": "最近更新：{date}",
        "category": "分类匹配 {category}",
        "more": "{reason}（另有 {n} 项）",
    },
}
TEMPLATE_LANGS = tuple(REASONS)


def template_lang(lang: str) -> str:
    """The template language of ``lang`` ('pt-BR' → 'pt', 'ZH' → 'zh'); a language without
    templates is a :class:`BadRequestError`."""
    code = lang.strip().replace("_", "-").split("-")[0].lower() if isinstance(lang, str) else ""
    if code not in REASONS:
        raise BadRequestError(
            f"template language {lang!r} is not available; use one of {', '.join(REASONS)}"
        )
    return code


def shorten(name: str, limit: int = MAX_NAME) -> str:
    """``name`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(name.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


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
    reasons_lang: str = "en",
    weights: TopNWeights | None = None,
) -> list[TopNItem]:
    """Score and order candidates; reasons in the template language ``reasons_lang``."""
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
                reasons=reasons(ev, category_key, reasons_lang),
            )
        )
    items.sort(key=lambda i: (-i.score, -(timestamp(i.updated_at) or 0.0), i.doc_id))
    return items


def reasons(ev: DocEvidence, category_key: str | None, reasons_lang: str = "en") -> list[str]:
    """At most :data:`MAX_REASONS` readable reasons: the strongest entity links (direct mentions,
    then related entities), the update date and the category match."""
    text = REASONS[template_lang(reasons_lang)]
    links = [
        text["direct"].format(name=shorten(n), value=s)
        for n, s in sorted(ev.direct.items(), key=lambda x: (-x[1], x[0]))
    ]
    links += [
        text["related"].format(name=shorten(q), via=shorten(via), value=w)
        for (q, via), (w, _) in sorted(ev.related.items(), key=lambda x: (-x[1][0], x[0]))
    ]
    tail = []
    if ev.updated_at:
        tail.append(text["recent"].format(date=(iso_utc(ev.updated_at) or "")[:10]))
    if category_key is not None and category_key in ev.categories:
        tail.append(text["category"].format(category=shorten(ev.categories[category_key])))
    room = max(1, MAX_REASONS - len(tail))
    shown = links[:room]
    if len(links) > room:
        shown[-1] = text["more"].format(reason=shown[-1], n=len(links) - room)
    return shown + tail
