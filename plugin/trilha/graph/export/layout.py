"""Node positions for the PNG drawing, in [-1, 1]², computed here (no networkx).

* ``radial``: a tree grown breadth-first from the first node (the document), each ring one hop
  further out, each node's children in the angular sector its leaves earn, so branches do not
  cross and a ring's labels stand apart;
* ``line``: nodes left to right (a path);
* ``circular``: evenly on a circle;
* ``spring``: a seeded Fruchterman–Reingold iteration.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Layout = Literal["radial", "line", "circular", "spring"]
Points = NDArray[np.float64]


def circular_layout(n: int) -> Points:
    """``n`` points evenly on the unit circle (one point at the origin when n == 1)."""
    if n == 1:
        return np.zeros((1, 2))
    angles = 2 * math.pi * np.arange(n) / max(n, 1)
    return np.column_stack([np.cos(angles), np.sin(angles)])


def line_layout(n: int) -> Points:
    """``n`` points evenly on the horizontal axis from -1 to 1."""
    xs = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(n)
    return np.column_stack([xs, np.zeros(n)])


def spring_layout(
    n: int, edges: Sequence[tuple[int, int]], *, seed: int = 0, iterations: int = 80
) -> Points:
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


def bfs_tree(n: int, edges: Sequence[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Parent (-1 for the root and for nodes not reached) and depth of each node, from node 0.

    Nodes that no edge reaches get the depth one past the deepest reached node.
    """
    links: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        if a != b:
            links[a].append(b)
            links[b].append(a)
    parent, depth = [-1] * n, [-1] * n
    if n:
        depth[0], frontier = 0, [0]
        while frontier:
            nxt = []
            for node in frontier:
                for other in sorted(links[node]):
                    if depth[other] < 0:
                        depth[other], parent[other] = depth[node] + 1, node
                        nxt.append(other)
            frontier = nxt
    far = max(depth, default=0) + 1
    return parent, [d if d >= 0 else far for d in depth]


def radial_layout(n: int, edges: Sequence[tuple[int, int]]) -> Points:
    """Node 0 at the centre, each BFS ring one step further out, sectors by leaf count."""
    parent, depth = bfs_tree(n, edges)
    if n <= 1:
        return np.zeros((n, 2))
    children: list[list[int]] = [[] for _ in range(n)]
    for node, p in enumerate(parent):
        if p >= 0:
            children[p].append(node)
    stray = [node for node in range(1, n) if parent[node] < 0]
    children[0].extend(stray)
    leaves = [0] * n
    for node in sorted(range(n), key=lambda i: -depth[i]):
        leaves[node] = max(1, sum(leaves[c] for c in children[node]))
    angle = [0.0] * n

    def place(node: int, start: float, span: float) -> None:
        total = sum(leaves[c] for c in children[node]) or 1
        for c in children[node]:
            share = span * leaves[c] / total
            angle[c] = start + share / 2
            place(c, start, share)
            start += share

    place(0, math.pi / 2, 2 * math.pi)
    top = max(depth)
    radius = np.array([depth[i] / top for i in range(n)])
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
