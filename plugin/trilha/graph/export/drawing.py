"""PNG drawing of a subgraph or path with matplotlib's Agg canvas (no pyplot, no networkx).

Readable first: positions from :mod:`trilha.graph.export.layout` (a radial tree around the
document by default, a line for a path); small markers coloured by label; each caption beside
its node, on a white ground, cut to :data:`MAX_CAPTION` characters (a chunk is ``#<ordinal>``);
edges styled by type (RELATED dashed, thicker with weight) with a legend instead of a word on
every edge.

Chinese, Japanese and Korean captions use a CJK font when matplotlib finds one
(:mod:`trilha.graph.export.fonts`). Without one a caption that cannot be drawn is replaced by its
document id when that can be drawn, else by ``[<n>]``, the node's position in the result's node
list, and a note at the foot of the picture says so: never missing-glyph boxes.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trilha.errors import requires_extra
from trilha.graph.export.fonts import cjk_font, drawable, font_paths
from trilha.graph.export.layout import (
    Layout,
    Points,
    circular_layout,
    line_layout,
    radial_layout,
    spring_layout,
)
from trilha.graph.read.results import GraphEdge, GraphNode, PathResult, SubgraphResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["MAX_CAPTION", "captions", "circular_layout", "draw_png", "spring_layout"]

logger = logging.getLogger(__name__)

MAX_CAPTION = 22
NO_FONT_NOTE = (
    "no CJK font found: [n] is the node's position in the result's nodes; "
    "install one (e.g. fonts-noto-cjk) to see the names"
)
_COLOURS = {
    "Doc": "#4e79a7",
    "Chunk": "#a0cbe8",
    "Entity": "#f28e2b",
    "Category": "#59a14f",
    "Tag": "#8cd17d",
    "Criterio": "#e15759",
    "Fato": "#ff9d9a",
    "Prova": "#b07aa1",
    "Task": "#edc948",
    "Project": "#f1ce63",
    "User": "#76b7b2",
    "Org": "#499894",
}
_EDGE_COLOURS = {
    "RELATED": "#e15759",
    "MENTIONS": "#f28e2b",
    "PART_OF": "#4e79a7",
    "IN_CATEGORY": "#59a14f",
    "HAS_TAG": "#8cd17d",
}


def _edge_colour(rel_type: str) -> str:
    return _EDGE_COLOURS.get(rel_type, "#888888")


def _text(node: GraphNode) -> str:
    extra = node.model_extra or {}
    if node.label == "Chunk" and extra.get("ordinal") is not None:
        return f"#{extra['ordinal']}"
    text = " ".join((node.title or node.name or node.id.partition(":")[2]).split())
    return text if len(text) <= MAX_CAPTION else text[: MAX_CAPTION - 1] + "…"


def captions(nodes: Sequence[GraphNode], fonts: tuple[str, ...]) -> tuple[list[str], bool]:
    """Each node's caption, and whether one had to be replaced for want of glyphs."""
    out, replaced = [], False
    for i, node in enumerate(nodes):
        text = _text(node)
        if not drawable(text, fonts):
            replaced = True
            doc_id = node.id.partition(":")[2]
            text = doc_id[:MAX_CAPTION] if node.label == "Doc" and drawable(doc_id, fonts) else ""
            text = text or f"[{i}]"
        out.append(text)
    return out, replaced


def _positions(n: int, pairs: list[tuple[int, int]], layout: Layout, seed: int) -> Points:
    if layout == "circular":
        return circular_layout(n)
    if layout == "spring":
        return spring_layout(n, pairs, seed=seed)
    if layout == "line":
        return line_layout(n)
    return radial_layout(n, pairs)


def draw_png(
    result: SubgraphResult | PathResult,
    out: Path,
    *,
    layout: Layout | None = None,
    seed: int = 0,
    size_in: tuple[float, float] = (12.0, 9.0),
    dpi: int = 100,
) -> Path:
    """Draw the nodes and edges of ``result`` into the PNG file ``out``; returns ``out``.

    ``layout`` defaults to ``radial`` for a subgraph and ``line`` for a path; ``seed`` seeds
    the ``spring`` layout.
    """
    with requires_extra("plots", "drawing a graph as PNG (matplotlib)"):
        import matplotlib  # noqa: F401  (the figure and the fonts below are matplotlib's)
    nodes: Sequence[GraphNode] = result.nodes if isinstance(result, SubgraphResult) else result.path
    index = {n.id: i for i, n in enumerate(nodes)}
    pairs = [(index[e.source], index[e.target]) for e in result.edges if _drawn(e, index)]
    chosen = layout or ("radial" if isinstance(result, SubgraphResult) else "line")
    pos = _positions(len(nodes), pairs, chosen, seed)
    fig = _figure(nodes, result.edges, index, pos, chosen, size_in, dpi)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png")
    return out


def _figure(
    nodes: Sequence[GraphNode],
    edges: Sequence[GraphEdge],
    index: dict[str, int],
    pos: Points,
    chosen: Layout,
    size_in: tuple[float, float],
    dpi: int,
) -> Figure:
    """The drawn figure: edges, nodes with captions (a CJK font when one is found), legend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cjk = cjk_font()
    texts, replaced = captions(nodes, font_paths(cjk))
    if replaced:
        logger.warning("no CJK font found; captions that need one are drawn as numbers")
    fig = Figure(figsize=size_in, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    family = ["DejaVu Sans", cjk] if cjk else ["DejaVu Sans"]
    _edges(ax, edges, index, pos)
    _nodes(ax, nodes, texts, pos, family, radial=chosen == "radial")
    _legend(ax, nodes, edges)
    if not nodes:
        ax.text(0.5, 0.5, "empty graph", ha="center", va="center", transform=ax.transAxes)
    if replaced:
        fig.text(0.01, 0.01, NO_FONT_NOTE, fontsize=8, color="#555555")
    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.25, 1.25)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.99, bottom=0.03)
    return fig


def _drawn(e: GraphEdge, index: dict[str, int]) -> bool:
    return e.source in index and e.target in index


def _nodes(
    ax: Axes,
    nodes: Sequence[GraphNode],
    texts: list[str],
    pos: Points,
    family: list[str],
    *,
    radial: bool,
) -> None:
    for i, (node, text) in enumerate(zip(nodes, texts, strict=True)):
        x, y = float(pos[i, 0]), float(pos[i, 1])
        ax.scatter(x, y, s=140, color=_COLOURS.get(node.label, "#bab0ac"), zorder=3)
        angle = math.atan2(y, x) if radial and (x or y) else -math.pi / 2
        dx, dy = math.cos(angle), math.sin(angle)
        ax.annotate(
            text,
            (x, y),
            xytext=(9 * dx, 9 * dy),
            textcoords="offset points",
            ha="left" if dx > 0.3 else ("right" if dx < -0.3 else "center"),
            va="bottom" if dy > 0.3 else ("top" if dy < -0.3 else "center"),
            fontsize=8,
            family=family,
            zorder=4,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
        )


def _edges(ax: Axes, edges: Sequence[GraphEdge], index: dict[str, int], pos: Points) -> None:
    for e in edges:
        if not _drawn(e, index):
            continue
        a, b = pos[index[e.source]], pos[index[e.target]]
        style = "--" if e.type == "RELATED" else "-"
        width = 0.6 + 1.6 * (e.weight or 0.0) if e.type == "RELATED" else 0.9
        ax.plot(
            [a[0], b[0]],
            [a[1], b[1]],
            style,
            color=_edge_colour(e.type),
            linewidth=width,
            alpha=0.45 if e.type == "RELATED" else 0.7,
            zorder=1,
        )


def _legend(ax: Axes, nodes: Sequence[GraphNode], edges: Sequence[GraphEdge]) -> None:
    from matplotlib.lines import Line2D

    labels = list(dict.fromkeys(n.label for n in nodes))
    types = list(dict.fromkeys(e.type for e in edges))
    handles = [
        Line2D([], [], marker="o", linestyle="", color=_COLOURS.get(lb, "#bab0ac"), label=lb)
        for lb in labels
    ] + [
        Line2D([], [], color=_edge_colour(t), linestyle="--" if t == "RELATED" else "-", label=t)
        for t in types
    ]
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize=7, frameon=False)
