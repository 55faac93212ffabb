"""What an orchestrator keeps of its workspace's graph between requests, per graph generation
(:class:`~trilha.graph.read.cache.GraphMemo`): the titled nodes each visibility sees
(pre-query's entity finder) and every anchor label's folded texts (the profile walk's term
scan). A write through the workspace's graph service makes both stale at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trilha.graph.read.cache import GraphMemo
from trilha.graph.read.profile_query import AnchorTexts, LabelTexts
from trilha.graph.service import GraphService

#: Seconds a value lives at most (writes by another process to a shared server are not seen
#: as a new generation).
TTL_S = 60.0


@dataclass(frozen=True)
class GraphCaches:
    """The entity finder's titles and the walk's anchor texts, over one graph service."""

    names: GraphMemo[list[dict[str, Any]]]
    texts: AnchorTexts

    @classmethod
    def of(cls, graph: GraphService | None, ttl_s: float = TTL_S) -> GraphCaches | None:
        """Empty caches following ``graph``'s generation; None without a graph."""
        if graph is None:
            return None

        def generation() -> int:
            return graph.generation

        names: GraphMemo[list[dict[str, Any]]] = GraphMemo(generation, ttl_s=ttl_s, max_size=256)
        texts: GraphMemo[LabelTexts] = GraphMemo(generation, ttl_s=ttl_s, max_size=32)
        return cls(names, AnchorTexts(texts))
