"""PNG drawing of a subgraph or path with matplotlib's Agg canvas (no pyplot, no networkx).

Layouts are computed here: ``circular`` (evenly on a circle) or ``spring`` (a seeded
Fruchterman–Reingold iteration). Nodes are coloured by label, RELATED edges dashed.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

from trilha.graph.results import GraphEdge, GraphNode, PathResult, SubgraphResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

Layout = Literal["circular", "spring"]
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


def circular_layout(n: int) -> NDArray[np.float64]:
    """``n`` points evenly on the unit circle (one point at the origin when n == 1)."""
    if n == 1:
        return np.zeros((1, 2))
    angles = 2 * math.pi * np.arange(n) / max(n, 1)
    return np.column_stack([np.cos(angles), np.sin(angles)])


def spring_layout(
    n: int, edges: Sequence[tuple[int, int]], *, seed: int = 0, iterations: int = 80
) -> NDArray[np.float64]:
    """Fruchterman–Reingold positions in [-1, 1]², deterministic for a given ``seed``."""
    if n <= 1:
        return np.zeros((n, 2))
    rng = np.random.default_rng(seed)
    pos = circular_layout(n) + rng.normal(scale=0.05, size=(n, 2))
    k = math.sqrt(4.0 / n)
    temp = 0.2
    for _ in range(iterations):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.linalg.norm(delta, axis=-1), 1e-3)
        force = (delta / dist[..., None]) * (k * k / dist)[..., None]
        disp = force.sum(axis=1)
        for a, b in edges:
            d = pos[a] - pos[b]
            length = max(float(np.linalg.norm(d)), 1e-3)
            pull = d / length * (length * length / k)
            disp[a] -= pull
            disp[b] += pull
        size = np.maximum(np.linalg.norm(disp, axis=1), 1e-9)
        pos += disp / size[:, None] * np.minimum(size, temp)[:, None]
        temp *= 0.95
    pos -= pos.mean(axis=0)
    return np.asarray(pos / max(float(np.abs(pos).max()), 1e-9), dtype=np.float64)


def draw_png(
    result: SubgraphResult | PathResult,
    out: Path,
    *,
    layout: Layout = "spring",
    seed: int = 0,
    size_in: tuple[float, float] = (8.0, 6.0),
    dpi: int = 100,
) -> Path:
    """Draw the nodes and edges of ``result`` into the PNG file ``out``; returns ``out``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    nodes: Sequence[GraphNode] = result.nodes if isinstance(result, SubgraphResult) else result.path
    index = {n.id: i for i, n in enumerate(nodes)}
    pairs = [
        (index[e.source], index[e.target])
        for e in result.edges
        if e.source in index and e.target in index
    ]
    pos = (
        circular_layout(len(nodes))
        if layout == "circular"
        else spring_layout(len(nodes), pairs, seed=seed)
    )
    fig = Figure(figsize=size_in, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    _edges(ax, result.edges, index, pos)
    for i, n in enumerate(nodes):
        ax.scatter(pos[i, 0], pos[i, 1], s=420, color=_COLOURS.get(n.label, "#bab0ac"), zorder=2)
        text = (n.title or n.name or n.id.partition(":")[2])[:24]
        ax.annotate(
            f"{n.label}\n{text}",
            (pos[i, 0], pos[i, 1]),
            ha="center",
            va="center",
            fontsize=7,
            zorder=3,
        )
    if not nodes:
        ax.text(0.5, 0.5, "empty graph", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # glyphs a font lacks (CJK) are skipped
        fig.savefig(out, format="png")
    return out


def _edges(
    ax: Axes, edges: Sequence[GraphEdge], index: dict[str, int], pos: NDArray[np.float64]
) -> None:
    for e in edges:
        if e.source not in index or e.target not in index:
            continue
        a, b = pos[index[e.source]], pos[index[e.target]]
        style = "--" if e.type == "RELATED" else "-"
        ax.plot([a[0], b[0]], [a[1], b[1]], style, color="#888888", linewidth=1, zorder=1)
        mid = (a + b) / 2
        ax.annotate(e.type, (mid[0], mid[1]), fontsize=5, color="#555555", ha="center")
