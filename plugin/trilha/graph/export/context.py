"""``context.md`` of a subgraph and the top-N documents (seed 003 §5): the data, then the text.

The text is rendered from per-language templates (pt, en, zh); mermaid comes from
:mod:`trilha.graph.export.mermaid`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from trilha.graph.export.mermaid import mermaid
from trilha.graph.model import normalise_name
from trilha.graph.read.ranking import template_lang
from trilha.graph.read.results import GraphEdge, PathResult, SubgraphResult, TopNItem


class ContextData(BaseModel):
    """The variables of the context.md template (seed 003 §5)."""

    entity_names: list[str] = Field(default_factory=list, description="Query entities.")
    doc_titles: list[str] = Field(default_factory=list, description="Related documents.")
    time_range: str = Field("", description="Time span of the related documents.")
    mermaid_graph: str = Field("", description="Mermaid text of the key subgraph.")
    edges: list[GraphEdge] = Field(default_factory=list, description="Evidence edges.")
    limit: int = Field(0, description="N of the recommended top-N.")
    top_docs: list[TopNItem] = Field(default_factory=list, description="Recommended documents.")


_TEMPLATES: dict[str, dict[str, str]] = {
    "zh": {
        "bg": "# 问题背景",
        "ents": "- 查询实体：",
        "docs": "- 关联文档：",
        "time": "- 时间范围：",
        "graph": "# 重点子图",
        "paths": "# 证据路径",
        "top": "# 推荐文档（Top {limit})",
        "join": ", ",
        "doc_join": "、",
        "reason_join": "；",
        "when": "（{date}）",
        "none": "无",
    },
    "en": {
        "bg": "# Background",
        "ents": "- Query entities: ",
        "docs": "- Related documents: ",
        "time": "- Time range: ",
        "graph": "# Key subgraph",
        "paths": "# Evidence paths",
        "top": "# Recommended documents (Top {limit})",
        "join": ", ",
        "doc_join": "; ",
        "reason_join": "; ",
        "when": " ({date})",
        "none": "none",
    },
    "pt": {
        "bg": "# Contexto da pergunta",
        "ents": "- Entidades consultadas: ",
        "docs": "- Documentos relacionados: ",
        "time": "- Período: ",
        "graph": "# Subgrafo principal",
        "paths": "# Caminhos de evidência",
        "top": "# Documentos recomendados (Top {limit})",
        "join": ", ",
        "doc_join": "; ",
        "reason_join": "; ",
        "when": " ({date})",
        "none": "nenhum",
    },
}


def _md(text: str) -> str:
    """Inline markdown-safe text: one line, with emphasis/link characters escaped."""
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", " ".join(text.split()))


def render_context_md(data: ContextData, lang: str = "en") -> str:
    """The context.md of seed 003 §5 (``lang`` 'zh' is the seed's wording; 'en', 'pt'; another
    language is a :class:`~trilha.errors.BadRequestError`)."""
    t = _TEMPLATES[template_lang(lang)]
    lines = [
        t["bg"],
        t["ents"] + (t["join"].join(_md(n) for n in data.entity_names) or t["none"]),
        t["docs"] + (t["doc_join"].join(_md(d) for d in data.doc_titles) or t["none"]),
        t["time"] + (_md(data.time_range) or t["none"]),
        "",
        t["graph"],
        "```mermaid",
        (data.mermaid_graph.rstrip("\n") or "graph LR"),
        "```",
        "",
        t["paths"],
    ]
    for e in data.edges:
        weight = f" ({e.weight:.2f})" if e.weight is not None else ""
        lines.append(f"- {_md(e.source)} --{e.type}{weight}--> {_md(e.target)}")
    lines += ["", t["top"].format(limit=data.limit)]
    for item in data.top_docs:
        when = t["when"].format(date=_md(item.updated_at or "")) if item.updated_at else ""
        lines.append(f"1. **{_md(item.title or item.doc_id)}**{when}  ")
        lines.append(f"   {t['reason_join'].join(_md(r) for r in item.reasons)}")
    return "\n".join(lines) + "\n"


def _entity_key(display: str) -> tuple[str, str]:
    label, _, name = display.partition(":")
    return label, normalise_name(name)


def build_context(
    subgraph: SubgraphResult | None = None,
    path: PathResult | None = None,
    top: Sequence[TopNItem] = (),
    *,
    entity_names: Sequence[str] = (),
    time_range: str | None = None,
    limit: int | None = None,
    max_edges: int = 30,
) -> ContextData:
    """Template variables from query results: titles, dates, mermaid and evidence edges (the
    path's, the subgraph's RELATED edges, then its MENTIONS of the query entities)."""
    docs = [n for n in (subgraph.nodes if subgraph else []) if n.label == "Doc"]
    titles = list(
        dict.fromkeys([*(n.title or n.id for n in docs), *(i.title or i.doc_id for i in top)])
    )
    dates = sorted(
        d[:10] for d in [*(n.updated_at for n in docs), *(i.updated_at for i in top)] if d
    )
    edges = _evidence(subgraph, path, entity_names)
    shown = subgraph if subgraph is not None else path
    return ContextData(
        entity_names=list(entity_names),
        doc_titles=titles,
        time_range=time_range
        if time_range is not None
        else (f"{dates[0]} – {dates[-1]}" if dates else ""),
        mermaid_graph=mermaid(shown) if shown is not None else "",
        edges=edges[:max_edges],
        limit=limit if limit is not None else len(top),
        top_docs=list(top),
    )


def _evidence(
    subgraph: SubgraphResult | None, path: PathResult | None, entity_names: Sequence[str]
) -> list[GraphEdge]:
    """The path's edges, then the subgraph's RELATED edges, then its MENTIONS of the query
    entities; each once."""
    sub_edges = subgraph.edges if subgraph else []
    asked = {("Entity", normalise_name(n)) for n in entity_names}
    return list(
        dict.fromkeys(
            [
                *(path.edges if path else []),
                *(e for e in sub_edges if e.type == "RELATED"),
                *(e for e in sub_edges if e.type == "MENTIONS" and _entity_key(e.target) in asked),
            ]
        )
    )
