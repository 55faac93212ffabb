"""Node postprocessors: cross-encoder rerank and the KG boost as LlamaIndex postprocessors."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from trilha.access import Principal
from trilha.errors import BadRequestError
from trilha.llamaindex.nodes import hit_to_node, node_to_hit
from trilha.rerank.base import Reranker
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.retrieve.pipeline import KgBooster
from trilha.settings import Fusion
from trilha.types import Hit
from trilha.workspace import Workspace

log = logging.getLogger(__name__)
#: Node metadata key naming why the KG boost left a node unboosted.
KG_WARNING_KEY = "trilha_kg_warning"
#: Node metadata key of a node's KG boost.
KG_KEY = "trilha_kg"


class CrossEncoderRerank(BaseNodePostprocessor):
    """Reorders nodes by a cross-encoder; earlier stage scores stay in the node metadata.

    Pass ``model`` (id or local path) or a ready ``reranker``. On the async path the model runs
    in a worker thread, off the event loop.
    """

    model: str | None = Field(default=None, description="Cross-encoder id or local path.")
    top_n: int = Field(default=12, gt=0, description="Nodes kept.")
    batch_size: int = Field(default=32, gt=0, description="Pairs per batch.")
    max_length: int = Field(default=256, gt=0, description="Max tokens per pair.")
    _reranker: Reranker = PrivateAttr()

    def __init__(
        self, model: str | None = None, *, reranker: Reranker | None = None, **kwargs: Any
    ) -> None:
        super().__init__(model=model, **kwargs)
        if reranker is None:
            if not model:
                raise BadRequestError("CrossEncoderRerank needs model= (id or path) or reranker=")
            reranker = CrossEncoderReranker(
                model, top_n=self.top_n, batch_size=self.batch_size, max_length=self.max_length
            )
        self._reranker = reranker

    @classmethod
    def class_name(cls) -> str:
        return "TrilhaCrossEncoderRerank"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise BadRequestError("rerank needs the query: pass query_bundle / query_str")
        if not nodes:
            return []
        hits = self._reranker.rerank(
            query_bundle.query_str, [node_to_hit(n) for n in nodes], top_n=self.top_n
        )
        return [hit_to_node(h) for h in hits]

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)


class KnowledgeGraphBoost(BaseNodePostprocessor):
    """The knowledge-graph boost as a postprocessor: ``(1 - w)·base + w·kg``, reordered.

    ``kg`` comes from one batched graph query per call and is kept as ``trilha_kg`` on every
    node. Nodes a trilha retriever made carry a fused score (already a weighted merge in
    [0, 1]): it becomes ``(1 - w)·fused + w·kg`` and the stage scores are rewritten. Nodes of
    any other retriever keep their own score scale: a node the graph gives no boost keeps its
    score, a boosted one gains ``w·kg·span / (1 - w)`` (``span`` the batch's score range), the
    order the formula gives over min-max scaled scores; their metadata gets ``trilha_kg`` only.
    A graph that is down or slow leaves the nodes in their order and puts the reason in each
    node's ``trilha_kg_warning`` metadata (hidden from the LLM), and in the log. The graph is
    read as ``principal`` sees it (None: anonymous). The postprocessor keeps no per-call state,
    so one instance serves concurrent queries.
    """

    weight: float = Field(default=0.1, ge=0, le=1, description="Share of the KG boost.")
    _booster: KgBooster = PrivateAttr()
    _principal: Principal | None = PrivateAttr(default=None)

    def __init__(
        self, booster: KgBooster, principal: Principal | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._booster = booster
        self._principal = principal

    @classmethod
    def from_workspace(
        cls, workspace: Workspace, weight: float | None = None, principal: Principal | None = None
    ) -> KnowledgeGraphBoost:
        """The booster of a workspace's graph (``TRILHA_WEIGHT_KG`` by default), reading as
        ``principal``."""
        booster = workspace.booster
        if booster is None:
            raise BadRequestError("the workspace has no graph; set TRILHA_GRAPH_BACKEND")
        share = Fusion.of_settings(workspace.settings).weight_kg if weight is None else weight
        return cls(booster, principal, weight=share)

    @classmethod
    def class_name(cls) -> str:
        return "TrilhaKnowledgeGraphBoost"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise BadRequestError("the KG boost needs the query: pass query_bundle / query_str")
        if not nodes:
            return []
        hits = [node_to_hit(n) for n in nodes]
        ids = [h.unit.unit_id for h in hits]
        kg, warning = self._booster.boost(query_bundle.query_str, ids, None, self._principal)
        if warning:
            log.warning("KG boost skipped: %s", warning)
            return [_with_meta(n, KG_WARNING_KEY, warning, n.score) for n in nodes]
        boosts = [kg.get(i, 0.0) for i in ids]
        if all(h.scores.fused_rank is not None for h in hits):
            return self._rescored(hits, boosts)
        scores = foreign_scores([n.score for n in nodes], boosts, self.weight)
        marked = [
            _with_meta(n, KG_KEY, k, s) for n, k, s in zip(nodes, boosts, scores, strict=True)
        ]
        return sorted(marked, key=lambda n: -(n.score or 0.0))

    def _rescored(self, hits: list[Hit], boosts: list[float]) -> list[NodeWithScore]:
        """Nodes of a trilha retriever: fused score and ranks rewritten, reordered."""
        boosted = []
        for hit, k in zip(hits, boosts, strict=True):
            fused = (1 - self.weight) * hit.scores.fused + self.weight * k
            boosted.append(
                Hit(unit=hit.unit, scores=hit.scores.model_copy(update={"kg": k, "fused": fused}))
            )
        boosted.sort(key=lambda h: -h.scores.fused)
        return [
            hit_to_node(Hit(unit=h.unit, scores=h.scores.model_copy(update={"fused_rank": rank})))
            for rank, h in enumerate(boosted, start=1)
        ]

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)


def foreign_scores(
    scores: Sequence[float | None], boosts: Sequence[float], weight: float
) -> list[float | None]:
    """Scores of another retriever's nodes after a KG boost, on their own scale.

    Ranking by ``(1 - w)·b + w·kg``, ``b = (s - lo) / span``, is ranking by
    ``s + kg·span·w / (1 - w)``: a node with no boost keeps ``s`` exactly. ``span`` is the
    batch's range (its top score, or 1, when every score is the same); with ``w = 1`` only the
    graph counts: boosted nodes go above the batch's top, by ``kg``.
    """
    given = [s for s in scores if s is not None]
    lo, hi = (min(given), max(given)) if given else (0.0, 0.0)
    span = hi - lo or abs(hi) or 1.0
    out: list[float | None] = []
    for s, k in zip(scores, boosts, strict=True):
        if k == 0:
            out.append(s)
        elif weight < 1:
            out.append((lo if s is None else s) + k * span * weight / (1 - weight))
        else:
            out.append(hi + k * span)
    return out


def _with_meta(nws: NodeWithScore, key: str, value: Any, score: float | None) -> NodeWithScore:
    """A copy of ``nws`` with ``key: value`` in its metadata (hidden from prompts and
    embeddings) and ``score``; the caller's node is untouched."""
    node = nws.node.model_copy(deep=True)
    node.metadata[key] = value
    for keys in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
        if key not in keys:
            keys.append(key)
    return NodeWithScore(node=node, score=score)
