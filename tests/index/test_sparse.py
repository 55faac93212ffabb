"""BM25 as Qdrant sparse vectors (local mode) scores what bm25s scores, under the same filters."""

from __future__ import annotations

from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from trilha.index.filters import Condition, FilterExpr
from trilha.index.lexical import LexicalIndex
from trilha.index.sparse import SparseLexical, sparse_side, term_id
from trilha.index.tokenize import tokenize
from trilha.types import TextUnit

TEXTS = [
    "The VPN client must be updated every month by the IT team.",
    "Security incidents are reported to the SOC within one hour.",
    "Travel expenses need receipts; the VPN is not needed for travel.",
    "The SOC reviews every security incident report and every VPN alert.",
    "Budget planning for the third quarter freezes hiring.",
    "An incident report names the incident, its time and the affected systems.",
]


@pytest.fixture()
def both(tmp_path: Path) -> tuple[SparseLexical, LexicalIndex, list[TextUnit]]:
    units = [
        TextUnit(unit_id=f"d{i}#0", doc_id=f"d{i}", text=t, setor="ti" if i % 2 else "fin")
        for i, t in enumerate(TEXTS)
    ]
    tokens = [tokenize(u.text, "en") for u in units]
    sparse = SparseLexical(QdrantClient(path=str(tmp_path / "q")))
    sparse.index(units, tokens)
    return sparse, LexicalIndex.build(units, tokens), units


@pytest.mark.parametrize("query", ["VPN", "security incident report", "SOC incident incident"])
def test_scores_equal_bm25s(
    both: tuple[SparseLexical, LexicalIndex, list[TextUnit]], query: str
) -> None:
    sparse, lexical, units = both
    tokens = lexical.query_tokens(query)
    expected = lexical.score_all(query)
    assert expected is not None
    got = sparse.top(tokens, k=10)
    want = {units[r].unit_id: float(s) for r, s in enumerate(expected) if s > 0}
    assert got.keys() == want.keys()
    for unit_id, score in want.items():
        assert got[unit_id] == pytest.approx(score, rel=1e-5)
    assert sparse.scores_of(tokens, list(want)[:2]) == {u: got[u] for u in list(want)[:2]}


def test_filters_are_applied_by_qdrant(
    both: tuple[SparseLexical, LexicalIndex, list[TextUnit]],
) -> None:
    sparse, lexical, _ = both
    only_ti = FilterExpr(parts=[Condition(key="setor", op="eq", value="ti")])
    scores, stage = sparse_side(sparse, lexical.query_tokens("VPN incident"), 10, only_ti)
    assert scores and all(int(u[1]) % 2 == 1 for u in scores)
    assert stage.name == "bm25" and stage.count == len(scores) and stage.note == "qdrant sparse"


def test_term_ids_are_stable_across_processes() -> None:
    assert term_id("vpn") == 0x21506F37  # a digest, not Python's per-process salted hash()
    assert term_id("vpn") != term_id("soc")
