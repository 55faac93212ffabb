"""Human-readable rendering of search results for the terminal."""

from __future__ import annotations

import textwrap

from trilha.types import Hit, SearchResult


def citation_text(hit: Hit) -> str:
    """``{doc_id, unit_id, page/section/heading}`` as one line."""
    u = hit.unit
    parts = [f"doc_id={u.doc_id}", f"unit_id={u.unit_id}"]
    if u.page is not None:
        parts.append(f"page={u.page}")
    if u.section:
        parts.append(f"section={u.section}")
    if u.heading:
        parts.append(f"heading={u.heading!r}")
    return "{" + ", ".join(parts) + "}"


def _num(value: float | None, rank: int | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" (#{rank})" if rank is not None else "")


def stage_text(hit: Hit) -> str:
    """Every stage's score and rank."""
    s = hit.scores
    parts = [f"bm25 {_num(s.bm25, s.bm25_rank)}", f"semantic {_num(s.semantic, s.semantic_rank)}"]
    if s.kg is not None:
        parts.append(f"kg {s.kg:.3f}")
    parts.append(f"fused {_num(s.fused, s.fused_rank)}")
    if s.rerank is not None:
        parts.append(f"rerank {_num(s.rerank, s.rerank_rank)}")
    return " · ".join(parts)


def render_result(result: SearchResult, snippet: int = 220) -> str:
    """Ranked hits with scores, citation and a snippet, then the trace summary."""
    lines = []
    for i, hit in enumerate(result.hits, start=1):
        title = hit.unit.title or hit.unit.doc_id
        lines.append(f"{i:>2}. [{hit.score:.3f}] {title}")
        lines.append(f"    {stage_text(hit)}")
        lines.append(f"    cite {citation_text(hit)}")
        text = textwrap.shorten(hit.unit.text, width=snippet, placeholder=" …")
        lines.extend(textwrap.wrap(text, width=96, initial_indent="    ", subsequent_indent="    "))
    if not result.hits:
        lines.append("  (no results)")
    t = result.trace
    stages = ", ".join(f"{s.name} {s.latency_ms:.1f} ms" for s in t.stages)
    lines.append(
        f"  trace: merge={t.merge} bm25_hits={t.bm25_hits} ann_hits={t.ann_hits} | {stages}"
    )
    for w in t.warnings:
        lines.append(f"  warning: {w}")
    return "\n".join(lines)
