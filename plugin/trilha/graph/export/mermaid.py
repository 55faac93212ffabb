"""Mermaid text of a subgraph or path (seed 003 §4).

Mermaid: ``graph LR``; node ids are ``<label>_<id>`` reduced to ``[A-Za-z0-9_]`` (made unique
with a numeric suffix when two collapse to the same id); labels are quoted and escaped with
mermaid entity codes (``#quot;``, ``#35;``, ``#lt;``...), newlines flattened, long labels cut, so
quotes, brackets, pipes, backticks and any unicode stay inside the label. Edges follow the
seed's shape: Doc → Chunk → Entity, ``-. "RELATED (w)" .->`` between entities (quoted: mermaid 11
rejects the seed's unquoted ``-. RELATED (0.73) .->``), Doc → Category/Tag;
other types are labelled ``-->|TYPE|``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from trilha.graph.read.results import GraphEdge, GraphNode, PathResult, SubgraphResult

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;"}


_MAX_LABEL = 60


_SECTIONS = (
    ("documents and chunks", {"PART_OF", "MENTIONS"}),
    ("entity relations", {"RELATED"}),
    ("categories and tags", {"IN_CATEGORY", "HAS_TAG"}),
)


def escape_label(text: str) -> str:
    """Text safe inside a quoted mermaid label."""
    flat = " ".join(text.split())
    if len(flat) > _MAX_LABEL:
        flat = flat[: _MAX_LABEL - 1] + "…"
    return "".join(_ENTITIES.get(c, c) for c in flat)


def mermaid_id(display_id: str) -> str:
    """``'Entity:Neo4j'`` → ``'entity_Neo4j'``: only ``[A-Za-z0-9_]``."""
    label, _, rest = display_id.partition(":")
    return f"{_UNSAFE.sub('_', label.lower()) or 'node'}_{_UNSAFE.sub('_', rest)}"


def _caption(node: GraphNode) -> str:
    extra = node.model_extra or {}
    if node.label == "Chunk" and extra.get("ordinal") is not None:
        return f"Chunk#{extra['ordinal']}"
    shown = node.title or node.name or node.id.partition(":")[2]
    return f"{node.label}｜{shown}"


class _Ids:
    """Unique mermaid ids per display id."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.used: set[str] = set()

    def get(self, display: str) -> str:
        if display not in self.ids:
            base, n = mermaid_id(display), 2
            candidate = base
            while candidate in self.used:
                candidate, n = f"{base}_{n}", n + 1
            self.ids[display] = candidate
            self.used.add(candidate)
        return self.ids[display]


def mermaid(result: SubgraphResult | PathResult) -> str:
    """Mermaid ``graph LR`` text of a subgraph or a path."""
    nodes = result.nodes if isinstance(result, SubgraphResult) else result.path
    return mermaid_from(nodes, result.edges)


def mermaid_from(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge]) -> str:
    """Mermaid ``graph LR`` text of nodes and edges."""
    ids, declared = _Ids(), set()
    captions = {n.id: _caption(n) for n in nodes}

    def ref(display: str) -> str:
        mid = ids.get(display)
        if mid in declared:
            return mid
        declared.add(mid)
        return f'{mid}["{escape_label(captions.get(display, display))}"]'

    lines = ["graph LR"]
    sections = [*_SECTIONS, ("other relations", None)]
    known = set().union(*(types for _, types in _SECTIONS))
    for title, types in sections:
        chosen = [e for e in edges if (e.type in types if types else e.type not in known)]
        if chosen:
            lines.append(f"  %% {title}")
            lines.extend(f"  {_edge(e, ref)}" for e in chosen)
    lonely = [n for n in nodes if ids.get(n.id) not in declared]
    if lonely:
        lines.append("  %% nodes")
        lines.extend(f"  {ref(n.id)}" for n in lonely)
    return "\n".join(lines) + "\n"


def _edge(e: GraphEdge, ref: Callable[[str], str]) -> str:
    if e.type == "PART_OF":  # drawn Doc --> Chunk, as in the seed
        return f"{ref(e.target)} --> {ref(e.source)}"
    if e.type == "RELATED":
        weight = f" ({e.weight:.2f})" if e.weight is not None else ""
        return f'{ref(e.source)} -. "RELATED{weight}" .-> {ref(e.target)}'
    if e.type in {"MENTIONS", "IN_CATEGORY", "HAS_TAG"}:
        return f"{ref(e.source)} --> {ref(e.target)}"
    return f"{ref(e.source)} -->|{e.type}| {ref(e.target)}"
