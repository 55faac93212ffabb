"""The retrieval systems compared on a BEIR set: each maps query text to ranked documents.

trilha's own systems (``bm25``, ``dense``, ``hybrid_weighted``, ``hybrid_rrf``,
``hybrid_weighted_kg``, ``hybrid_weighted_expanded`` — the query's variants from the configured
expander searched too — and ``hybrid_weighted_rerank``) search one open
:class:`~trilha.workspace.Workspace`.
``llamaindex_fusion`` is LlamaIndex's ``QueryFusionRetriever`` (relative-score fusion of
``BM25Retriever`` and a ``VectorStoreIndex`` retriever) over the same units, the same indexed
text (:func:`~trilha.ingest.chunking.index_text`) and the workspace's stored vectors, so only the
retrieval logic differs. Units are aggregated to documents by their best unit.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from trilha.errors import BadRequestError, requires_extra
from trilha.ingest.chunking import index_text
from trilha.rerank.base import Reranker, apply_scores
from trilha.types import Hit, SearchResult, Side

if TYPE_CHECKING:
    from llama_index.core.retrievers import QueryFusionRetriever

    from trilha.workspace import Workspace

#: (doc_id, score) pairs, best first.
Ranking = list[tuple[str, float]]
#: A system under evaluation: query text -> ranked documents.
System = Callable[[str], Ranking]
#: Scores (query, hit) pairs, one score per hit in input order.
PairScorer = Callable[[str, Sequence[Hit]], list[float]]

BOTH: tuple[Side, ...] = ("bm25", "semantic")


@dataclass(frozen=True)
class SearchSpec:
    """How one of trilha's systems calls :meth:`Workspace.search`."""

    sides: tuple[Side, ...]
    merge: str = "weighted"
    kg: bool = False
    expand: bool = False


#: trilha's systems without rerank, in report order.
SPECS: dict[str, SearchSpec] = {
    "bm25": SearchSpec(("bm25",)),
    "dense": SearchSpec(("semantic",)),
    "hybrid_weighted": SearchSpec(BOTH, "weighted"),
    "hybrid_rrf": SearchSpec(BOTH, "rrf"),
    "hybrid_weighted_kg": SearchSpec(BOTH, "weighted", kg=True),
    "hybrid_weighted_expanded": SearchSpec(BOTH, "weighted", expand=True),
}


def by_document(ranked: Iterable[tuple[str, float]]) -> Ranking:
    """Documents in the order of their best unit, each with that unit's score.

    ``ranked`` is (doc_id, score) per unit in the system's own order, best first, so a
    document's first unit is its best (its max under the system's ordering key, which after a
    blended rerank is not the score shown).
    """
    best: dict[str, float] = {}
    for doc_id, score in ranked:
        best.setdefault(doc_id, score)
    return list(best.items())


def hits_to_documents(hits: Sequence[Hit]) -> Ranking:
    """Ranked documents of ranked hits (rerank score when present, else fused)."""
    return by_document((h.unit.doc_id, h.score) for h in hits)


def searcher(ws: Workspace, spec: SearchSpec, top_k: int) -> Callable[[str], SearchResult]:
    """The workspace search a spec describes, with its trace."""

    def search(query: str) -> SearchResult:
        return ws.search(
            query, top_k=top_k, sides=spec.sides, merge=spec.merge, kg=spec.kg, expand=spec.expand
        )

    return search


def workspace_system(ws: Workspace, spec: SearchSpec, top_k: int = 100) -> System:
    """One of trilha's systems as ``query -> ranked documents``."""
    search = searcher(ws, spec, top_k)
    return lambda query: hits_to_documents(search(query).hits)


def rerank_system(
    ws: Workspace,
    scorer: PairScorer,
    pool: int = 100,
    blend: float = 0.0,
    base: str = "hybrid_weighted",
) -> System:
    """A hybrid's top-``pool`` reordered by a cross-encoder; all ``pool`` hits kept."""
    search = searcher(ws, SPECS[base], pool)

    def run(query: str) -> Ranking:
        hits = search(query).hits
        return hits_to_documents(apply_scores(hits, scorer(query, hits), len(hits), blend))

    return run


class ScoreCache:
    """Cross-encoder scores kept in SQLite, so re-running an evaluation rescores nothing.

    Keyed by the model's fingerprint (path, backend, precision, max length), the query text and
    the unit id plus a hash of the unit's text, so a changed query or passage is rescored.
    """

    def __init__(self, path: Path, reranker: Reranker, model_key: str) -> None:
        self.reranker = reranker
        self.model_key = model_key
        self.hits = 0
        self.misses = 0
        self._db = sqlite3.connect(str(path))
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS scores (model TEXT, query TEXT, unit TEXT, "
            "score REAL, PRIMARY KEY (model, query, unit))"
        )

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, query: str, hits: Sequence[Hit]) -> list[float]:
        """Scores of ``hits`` for ``query``; only pairs never seen are sent to the model."""
        qkey = _digest(query)
        keys = [f"{h.unit.unit_id}:{_digest(index_text(h.unit))}" for h in hits]
        known = self._lookup(qkey, keys)
        todo = [i for i, k in enumerate(keys) if k not in known]
        if todo:
            fresh = self.reranker.score(query, [index_text(hits[i].unit) for i in todo])
            rows = [(self.model_key, qkey, keys[i], s) for i, s in zip(todo, fresh, strict=True)]
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)", rows)
            known.update({keys[i]: s for i, s in zip(todo, fresh, strict=True)})
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        return [known[k] for k in keys]

    def _lookup(self, qkey: str, keys: list[str]) -> dict[str, float]:
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self._db.execute(
            f"SELECT unit, score FROM scores WHERE model=? AND query=? AND unit IN ({marks})",
            (self.model_key, qkey, *keys),
        )
        return {str(unit): float(score) for unit, score in rows}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def fusion_retriever(ws: Workspace, top_k: int = 100) -> QueryFusionRetriever:
    """LlamaIndex's QueryFusionRetriever over the workspace's units and stored vectors.

    BM25Retriever (its defaults: English stemmer and stopwords) and a ``VectorStoreIndex`` whose
    nodes carry the stored embeddings (nothing is re-encoded; queries are encoded by the
    workspace's encoder), fused by relative score, one query, ``MockLLM`` so nothing reaches a
    network.
    """
    from llama_index.core import VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
    from llama_index.core.schema import BaseNode, TextNode

    with requires_extra("eval", "the LlamaIndex fusion baseline (llama-index-retrievers-bm25)"):
        from llama_index.retrievers.bm25 import BM25Retriever

    from trilha.llamaindex.embedding import TrilhaEmbedding

    units = ws.all_units()
    vectors = ws.vectors([u.unit_id for u in units])
    nodes: list[BaseNode] = [
        TextNode(id_=u.unit_id, text=index_text(u), embedding=vectors[u.unit_id].tolist())
        for u in units
        if u.unit_id in vectors
    ]
    index = VectorStoreIndex(nodes, embed_model=TrilhaEmbedding(ws.embedder))
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=top_k)
    return QueryFusionRetriever(
        [index.as_retriever(similarity_top_k=top_k), bm25],
        llm=MockLLM(),
        mode=FUSION_MODES.RELATIVE_SCORE,
        similarity_top_k=top_k,
        num_queries=1,
        use_async=False,
    )


def llamaindex_fusion(ws: Workspace, top_k: int = 100) -> System:
    """:func:`fusion_retriever` as ``query -> ranked documents``."""
    retriever = fusion_retriever(ws, top_k)
    doc_of = {u.unit_id: u.doc_id for u in ws.all_units()}

    def run(query: str) -> Ranking:
        found = retriever.retrieve(query)
        return by_document((doc_of[n.node.node_id], float(n.score or 0.0)) for n in found)

    return run


#: Systems that need a cross-encoder (``trilha eval --reranker``).
RERANK_SYSTEMS = ("hybrid_weighted_rerank", "hybrid_weighted_kg_rerank")
#: Every system ``trilha eval`` knows, in report order.
EVAL_SYSTEMS = (*SPECS, *RERANK_SYSTEMS, "llamaindex_fusion")


def build_systems(
    ws: Workspace,
    top_k: int = 100,
    scorer: PairScorer | None = None,
    blend: float = 0.0,
    names: Sequence[str] | None = None,
) -> dict[str, System]:
    """The systems ``names`` (default: all), in report order; the ``*_rerank`` ones only with a
    ``scorer``. The ``_kg`` systems need the workspace's graph (without one they equal their
    plain twins and the trace says why)."""
    wanted = set(EVAL_SYSTEMS if names is None else names)
    makers: dict[str, Callable[[], System]] = {
        name: partial(workspace_system, ws, spec, top_k) for name, spec in SPECS.items()
    }
    if scorer is not None:
        makers["hybrid_weighted_rerank"] = lambda: rerank_system(ws, scorer, top_k, blend)
        makers["hybrid_weighted_kg_rerank"] = lambda: rerank_system(
            ws, scorer, top_k, blend, base="hybrid_weighted_kg"
        )
    makers["llamaindex_fusion"] = lambda: llamaindex_fusion(ws, top_k)
    return {name: make() for name, make in makers.items() if name in wanted}


def known_names(names: Sequence[str], known: Sequence[str], refusal: str) -> tuple[str, ...]:
    """``names`` stripped and deduplicated, each one of ``known``; else a one-line error,
    ``refusal`` with the unknown names (or 'nothing') in its ``{}``, listing ``known``."""
    wanted = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        bad = ", ".join(unknown) or "nothing"
        raise BadRequestError(f"{refusal.format(bad)}; name some of {', '.join(known)}")
    return wanted


@dataclass(frozen=True)
class Selection:
    """Which systems run and how their runs are scored."""

    names: tuple[str, ...] | None = None
    ignore_identical_ids: bool = False

    @classmethod
    def of(
        cls, names: Sequence[str] | None, reranker: object, ignore_identical_ids: bool = False
    ) -> Selection:
        """Check ``names`` against :data:`EVAL_SYSTEMS` (the rerank ones need ``reranker``)."""
        if names is None:
            return cls(None, ignore_identical_ids)
        wanted = known_names(names, EVAL_SYSTEMS, "systems: {} is not an eval system")
        needing = [n for n in wanted if n in RERANK_SYSTEMS]
        if needing and reranker is None:
            raise BadRequestError(f"{', '.join(needing)} needs a cross-encoder: give --reranker")
        return cls(wanted, ignore_identical_ids)
