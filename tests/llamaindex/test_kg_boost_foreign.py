"""KnowledgeGraphBoost over nodes another retriever made (issue 31, item 6): their scores stay
on their own scale and untouched where the graph gives no boost, and the only metadata it adds
is ``trilha_kg``."""

from __future__ import annotations

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from llama_index.retrievers.bm25 import BM25Retriever

from tests.conftest import READER
from trilha.llamaindex import KnowledgeGraphBoost
from trilha.workspace import Workspace

DEBT = "juridico/stj-prescricao-quinquenal-cobranca"
QUERY = "quanto tempo tenho para cobrar"


def plain_nodes(ws: Workspace) -> list[TextNode]:
    """The workspace's passages as plain LlamaIndex nodes (their ids are trilha's unit ids,
    their metadata nothing of trilha's)."""
    hits = ws.search(QUERY, top_k=40, kg=False, principal=READER).hits
    return [TextNode(id_=h.unit.unit_id, text=h.unit.text, metadata={"src": "x"}) for h in hits]


def test_bm25_nodes_keep_their_scores_where_the_boost_is_zero(legal_ws: Workspace) -> None:
    nodes = BM25Retriever.from_defaults(nodes=plain_nodes(legal_ws), similarity_top_k=10).retrieve(
        QUERY
    )
    before = {n.node.node_id: n.score for n in nodes}
    assert max(s or 0 for s in before.values()) > 1  # BM25's own scale, not [0, 1]
    boost = KnowledgeGraphBoost.from_workspace(legal_ws)
    out = boost.postprocess_nodes(nodes, query_str=QUERY)
    kg = {n.node.node_id: n.node.metadata["trilha_kg"] for n in out}
    assert set(kg) == set(before) and any(v > 0 for v in kg.values())
    for n in out:
        assert set(n.node.metadata) == {"src", "trilha_kg"}
        if kg[n.node.node_id] == 0:
            assert n.score == before[n.node.node_id]
        else:
            assert (n.score or 0) > (before[n.node.node_id] or 0)
    # the order is the documented one: (1 - w)·minmax(score) + w·kg
    lo, hi = min(before.values()), max(before.values())  # type: ignore[type-var]
    mixed = {u: 0.9 * ((before[u] - lo) / (hi - lo)) + 0.1 * kg[u] for u in before}  # type: ignore[operator]
    assert [n.node.node_id for n in out] == sorted(before, key=lambda u: -mixed[u])
    assert "trilha_kg" not in out[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert all("trilha_kg" not in n.node.metadata for n in nodes)  # the caller's nodes


def test_vector_nodes_unknown_to_the_graph_are_left_as_they_are(legal_ws: Workspace) -> None:
    texts = ["prazo de prescrição", "cobrança de dívida", "política de senhas"]
    index = VectorStoreIndex(
        [TextNode(id_=f"other-{i}", text=t) for i, t in enumerate(texts)],
        embed_model=MockEmbedding(embed_dim=8),
    )
    nodes = index.as_retriever(similarity_top_k=3).retrieve(QUERY)
    out = KnowledgeGraphBoost.from_workspace(legal_ws).postprocess_nodes(nodes, query_str=QUERY)
    assert [(n.node.node_id, n.score) for n in out] == [(n.node.node_id, n.score) for n in nodes]
    assert all(n.node.metadata == {"trilha_kg": 0.0} for n in out)
    assert isinstance(out[0], NodeWithScore)


@pytest.mark.parametrize(
    ("scores", "boosts", "weight", "expected"),
    [
        ([2.0, 1.0, 0.5], [0.0, 1.0, 0.0], 0.1, [2.0, 1.0 + 1.5 * 0.1 / 0.9, 0.5]),
        ([2.0, 1.0, 0.5], [0.0, 0.0, 0.0], 0.1, [2.0, 1.0, 0.5]),
        ([2.0, 1.0, 0.5], [0.0, 0.5, 1.0], 1.0, [2.0, 2.75, 3.5]),
        ([1.0, 1.0], [0.0, 0.5], 0.5, [1.0, 1.5]),
        ([None, 3.0], [0.0, 0.0], 0.2, [None, 3.0]),
    ],
)
def test_foreign_scores_table(
    scores: list[float | None], boosts: list[float], weight: float, expected: list[float | None]
) -> None:
    from trilha.llamaindex.postprocessors import foreign_scores

    assert foreign_scores(scores, boosts, weight) == pytest.approx(expected)
