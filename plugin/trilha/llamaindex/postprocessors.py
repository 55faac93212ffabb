"""Node postprocessors: cross-encoder rerank and the KG boost as LlamaIndex postprocessors."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from trilha.access import Principal
from trilha.errors import BadRequestError
from trilha.llamaindex.nodes import hit_to_node, node_to_hit
from trilha.rerank.base import Reranker
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.retrieve.fusion import minmax
from trilha.retrieve.hybrid import KgBooster
from trilha.types import Hit
from trilha.workspace import Workspace

log = logging.getLogger(__name__)
#: Node metadata key naming why the KG boost left a node unboosted.
KG_WARNING_KEY = "trilha_kg_warning"


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
    """Seed 001's KG boost as a postprocessor: ``(1 - w)·base + w·kg``, reordered.

    ``base`` is the node's fused score when a trilha retriever made it (already a weighted
    merge in [0, 1]), else its score min-max scaled over the batch. ``kg`` comes from one
    batched graph query per call; ``trilha_kg`` is kept on every node. A graph that is down or
    slow leaves the nodes in their order and puts the reason in each node's
    ``trilha_kg_warning`` metadata (hidden from the LLM), and in the log. The graph is read as
    ``principal`` sees it (None: anonymous). The postprocessor keeps no per-call state, so one
    instance serves concurrent queries.
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
        share = workspace.settings.weight_kg if weight is None else weight
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
            return [_warned(n, warning) for n in nodes]
        base = _base_scores(nodes, hits)
        boosted = []
        for hit, b in zip(hits, base, strict=True):
            k = kg.get(hit.unit.unit_id, 0.0)
            scores = hit.scores.model_copy(
                update={"kg": k, "fused": (1 - self.weight) * b + self.weight * k}
            )
            boosted.append(Hit(unit=hit.unit, scores=scores))
        boosted.sort(key=lambda h: -h.scores.fused)
        out = []
        for rank, hit in enumerate(boosted, start=1):
            ranked = Hit(unit=hit.unit, scores=hit.scores.model_copy(update={"fused_rank": rank}))
            out.append(hit_to_node(ranked))
        return out

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)


def _warned(nws: NodeWithScore, warning: str) -> NodeWithScore:
    """A copy of ``nws`` whose metadata says why it was not boosted."""
    node = nws.node.model_copy(deep=True)
    node.metadata[KG_WARNING_KEY] = warning
    for keys in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
        if KG_WARNING_KEY not in keys:
            keys.append(KG_WARNING_KEY)
    return NodeWithScore(node=node, score=nws.score)


def _base_scores(nodes: list[NodeWithScore], hits: list[Hit]) -> list[float]:
    """Fused scores when every node has one from trilha, else min-max of the node scores."""
    if all(h.scores.fused_rank is not None for h in hits):
        return [h.scores.fused for h in hits]
    scaled = minmax({str(i): float(n.score or 0.0) for i, n in enumerate(nodes)})
    return [scaled[str(i)] for i in range(len(nodes))]
