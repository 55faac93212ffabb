"""Human-readable rendering for the terminal: search results, graph reads, metric tables."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from typing import Any

from trilha.types import Hit, SearchResult

#: Characters a terminal acts on (escape sequences, bells, backspaces): never printed as they are.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


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
    if t.cache_hit:
        lines.append("  served from the result cache")
    if t.expansion_queries:
        lines.append(f"  also searched: {' | '.join(t.expansion_queries)}")
    for w in t.warnings:
        lines.append(f"  warning: {w}")
    return "\n".join(lines)


def graph_text(result: Any) -> str:
    """A graph read (top-N documents with reasons, or nodes and edges with their limits)."""
    data = result.model_dump()
    if "items" in data:
        return (
            "\n".join(
                f"{i}. [{it['score']:.3f}] {it['doc_id']} — {it['title'] or '(untitled)'}\n   "
                + "; ".join(it["reasons"])
                for i, it in enumerate(data["items"], 1)
            )
            or "(no documents)"
        )
    nodes = data.get("nodes", data.get("path", []))
    lines = [f"{len(nodes)} nodes, {len(data['edges'])} edges"]
    lines += [f"  {e['source']} -[{e['type']}]-> {e['target']}" for e in data["edges"]]
    meta = data.get("constraints") or data.get("meta") or {}
    lines.append(f"  limits: {json.dumps(meta, ensure_ascii=False)}")
    return "\n".join(lines)


def table_text(rows: dict[str, dict[str, float]], cols: Sequence[str]) -> str:
    """One row per system, one column per metric (nan where a system lacks it)."""
    lines = [f"{'system':<28}" + "".join(f"{c:>12}" for c in cols)]
    for name, values in rows.items():
        lines.append(f"{name:<28}" + "".join(f"{values.get(c, float('nan')):>12.4f}" for c in cols))
    return "\n".join(lines)


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline shown as its escape
    (``\\x1b``), so that stored text cannot drive the terminal it is printed on."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def render_bundle(bundle: Any, snippet: int = 160, limit: int | None = None) -> str:
    """A ContextBundle for a terminal: plan, items by memory class with citations (at most
    ``limit`` of them), warnings; control characters shown escaped (:func:`printable`)."""
    meta, trace = bundle.cdc_metadata, bundle.trace
    pre = trace.prequery
    lines = [
        f"intent {pre.retrieval_intent} ({pre.classifier}), depth {meta.depth_level}, "
        f"profile {meta.query_profile_used or '-'}, strategies {', '.join(bundle.strategies_used)}",
        bundle.retrieval_summary,
    ]
    shown = {i.item_id for i in bundle.context_items[:limit]}
    for klass, items in bundle.by_memory_class:
        items = [i for i in items if i.item_id in shown]
        if items:
            lines.append(f"[{klass}]")
        for item in items:
            text = " ".join(item.text.split())
            text = text if len(text) <= snippet else text[: snippet - 1] + "…"
            lines.append(f"  {item.item_id}  {text}")
            lines.append(f"      ↳ {item.citation.label}")
    if len(shown) < len(bundle.context_items):
        lines.append(f"  (+{len(bundle.context_items) - len(shown)} more items)")
    lines += [f"warning: {w}" for w in trace.warnings]
    lines.append(f"{bundle.tokens_estimated} tokens, {trace.latency_ms:.1f} ms, job {trace.job_id}")
    return printable("\n".join(lines))


def render_answer(answer: Any, snippet: int = 160) -> str:
    """An :class:`~trilha.answer.types.Answer` for a terminal: the answer, its citations, the
    trace in one line, warnings; or why there is no answer (control characters escaped)."""
    lines: list[str] = []
    if answer.no_answer is not None:
        stop = answer.no_answer
        lines.append(f"No answer: {stop.reason} (stopped at {stop.edge}: {stop.condition})")
    else:
        lines.append(answer.answer)
    if answer.citations:
        lines.append("")
    for c in answer.citations:
        where = ", ".join(
            f"{k} {v}" for k, v in (("page", c.page), ("section", c.section),
                                    ("heading", c.heading)) if v is not None
        )  # fmt: skip
        lines.append(f"[{c.number}] {c.doc_id} · {c.unit_id}" + (f" · {where}" if where else ""))
        lines.append(f"    {textwrap.shorten(c.snippet, width=snippet, placeholder=' …')}")
    t, m = answer.trace, answer.metrics
    hit = ", cache hit" if t.cache_hit else ""
    lines.append(
        f"\n{t.trace_id} · {m.latency_ms:.0f} ms{hit} · {t.provider}/{t.model} · "
        f"bm25 {m.retrieval.bm25_hits}, ann {m.retrieval.ann_hits}, kept "
        f"{m.retrieval.rerank_kept} · {t.context_tokens} context tokens · {t.principal}"
    )
    lines += [f"warning: {w}" for w in t.warnings]
    return printable("\n".join(lines))
