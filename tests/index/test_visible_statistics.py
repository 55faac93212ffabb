"""Hidden units move no score a caller sees: BM25's N, df and avgdl count only visible units,
on the in-memory side, the Qdrant sparse side, a workspace search and the CLI."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import bm25s
import numpy as np
import pytest
from qdrant_client import QdrantClient

from trilha.access import Principal
from trilha.access.compiled import compile_policy
from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.index.lexical import LexicalIndex
from trilha.index.sparse import SparseLexical
from trilha.index.tokenize import tokenize
from trilha.ingest.chunking import chunk_document
from trilha.ingest.loaders import SourceDocument
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.settings import TrilhaSettings, uncached
from trilha.types import TextUnit
from trilha.workspace import Workspace

#: Seen by some of the principals below (access metadata, text).
SEEN: list[tuple[dict[str, object], str]] = [
    ({}, "The SOC reviews every security incident report within one hour."),
    ({}, "Remote work needs a VPN; the VPN client is updated monthly."),
    ({}, "Travel expenses need receipts and a short incident note."),
    ({"visibility": "org", "org_id": "acme"}, "Acme budget: the audit of the VPN contract."),
    ({"visibility": "org", "org_id": "acme", "sensitivity": 1}, "Incident budget for acme."),
    ({"visibility": "restricted", "acl": ["finance"]}, "Finance audit of the incident budget."),
    ({"visibility": "project", "project_id": "atlas", "hierarchy_level": 2},
     "Atlas incident security review, security first, then the audit."),
    ({"lang": "pt"}, "Relatório de incidente de segurança da VPN."),
]  # fmt: skip
#: Seen by none of them: another owner's private note, a higher sensitivity, another org,
#: a role nobody holds, a language none of the seen units has.
HIDDEN: list[tuple[dict[str, object], str]] = [
    ({"visibility": "private", "owner_id": "zoe", "sensitivity": 3},
     "Security incident incident VPN audit: the merger plan."),
    ({"sensitivity": 3}, "VPN VPN VPN security budget incident"),
    ({"visibility": "org", "org_id": "beta"}, "Beta incident report on the audit and the VPN."),
    ({"visibility": "restricted", "acl": ["board"]}, "Board budget audit security incident."),
    ({"lang": "fr", "sensitivity": 3}, "Rapport des incidents de sécurité et audit du budget."),
]  # fmt: skip
PRINCIPALS = {
    "anonymous": Principal.anonymous(),
    "user": Principal(user_id="ana", org_ids=["acme"], clearance=1),
    "roles": Principal(user_id="caio", org_ids=["acme"], project_ids=["atlas"],
                       roles=["finance", "it"], hierarchy_level=2, clearance=2),
}  # fmt: skip
QUERIES = ["security incident", "VPN audit budget", "incident incident report", "relatório"]


def documents(rows: list[tuple[dict[str, object], str]], prefix: str) -> list[SourceDocument]:
    return [
        SourceDocument(doc_id=f"{prefix}{i}", text=text, source_type="text",
                       meta={"lang": "en", **meta})
        for i, (meta, text) in enumerate(rows)
    ]  # fmt: skip


def units_of(docs: list[SourceDocument]) -> tuple[list[TextUnit], list[list[str]]]:
    units = [u for d in docs for u in chunk_document(d)]
    return units, [tokenize(u.text, u.lang) for u in units]


def visible_scores(lexical: LexicalIndex, principal: Principal, query: str) -> dict[str, float]:
    """Every visible unit's BM25 score for ``query`` (zeros included)."""
    visible = compile_policy(principal).row_mask(lexical.columns)
    scores = lexical.score_all(query, visible)
    rows = range(len(lexical)) if visible is None else np.flatnonzero(visible)
    return {lexical.units[r].unit_id: 0.0 if scores is None else float(scores[r]) for r in rows}


def reference_bm25(tokens: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75):
    """Lucene BM25 written out from the formula, in plain Python floats."""
    n, avgdl = len(tokens), sum(max(len(t), 1) for t in tokens) / len(tokens)
    df = Counter(t for doc in tokens for t in set(doc))
    out = []
    for doc in tokens:
        tf, norm = Counter(doc), k1 * (1 - b + b * max(len(doc), 1) / avgdl)
        out.append(sum(math.log(1 + (n - df[q] + 0.5) / (df[q] + 0.5)) * tf[q] / (tf[q] + norm)
                       for q in query if q in tf))  # fmt: skip
    return out


def test_everything_visible_scores_as_bm25s_did() -> None:
    units, tokens = units_of(documents(SEEN, "s") + documents(HIDDEN, "h"))
    lexical = LexicalIndex.build(units, tokens)
    previous = bm25s.BM25(k1=1.5, b=0.75, method="lucene")  # what the index ran before
    previous.index(tokens, show_progress=False)
    for query in QUERIES:
        q = lexical.query_tokens(query)
        got = lexical.score_all(query)
        assert got is not None
        was = previous.get_scores_from_ids(previous.get_tokens_ids(q))
        np.testing.assert_allclose(got, was, rtol=1e-6, atol=1e-9)  # bm25s keeps float32
        np.testing.assert_allclose(got, reference_bm25(tokens, q), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("who", list(PRINCIPALS))
def test_hidden_units_move_no_lexical_score(who: str) -> None:
    seen, hidden = documents(SEEN, "s"), documents(HIDDEN, "h")
    before = LexicalIndex.build(*units_of(seen))
    after = LexicalIndex.build(*units_of(hidden[:2] + seen + hidden[2:]))  # other rows too
    principal = PRINCIPALS[who]
    mask = compile_policy(principal).row_mask(after.columns)
    assert mask is not None and not mask[[after.row_of[f"h{i}#0"] for i in range(5)]].any()
    for query in QUERIES:
        old, new = visible_scores(before, principal, query), visible_scores(after, principal, query)
        assert new.keys() == old.keys() and any(old.values())
        assert all(abs(new[u] - old[u]) <= 1e-9 for u in old), (query, old, new)
        visible_before = compile_policy(principal).row_mask(before.columns)
        assert after.query_tokens(query, mask) == before.query_tokens(query, visible_before)


@pytest.mark.parametrize("who", list(PRINCIPALS))
def test_hidden_units_move_no_sparse_score(tmp_path: Path, who: str) -> None:
    seen, hidden = units_of(documents(SEEN, "s")), units_of(documents(HIDDEN, "h"))
    sparse = SparseLexical(QdrantClient(path=str(tmp_path / "q")))
    sparse.index(*seen)
    lexical = LexicalIndex.build(*seen)
    policy = compile_policy(PRINCIPALS[who])
    visible = policy.row_mask(lexical.columns)
    before = {}
    for query in QUERIES:
        tokens = lexical.query_tokens(query, visible)
        before[query] = sparse.top(tokens, 50, visible=policy.expr)
        want = {u: s for u, s in visible_scores(lexical, PRINCIPALS[who], query).items() if s > 0}
        assert before[query].keys() == want.keys()
        assert all(abs(before[query][u] - s) <= 1e-9 for u, s in want.items())
    sparse.index(*hidden)
    for query in QUERIES:
        after = sparse.top(lexical.query_tokens(query, visible), 50, visible=policy.expr)
        assert after.keys() == before[query].keys()
        assert all(abs(after[u] - s) <= 1e-9 for u, s in before[query].items()), query
        assert sparse.scores_of(lexical.query_tokens(query, visible), list(after), policy.expr) \
            == after  # fmt: skip


#: Hidden Portuguese notes, more than every English unit: Portuguese becomes the workspace's
#: most frequent language, that of a query no detector can place ("VPN audit budget").
HIDDEN_PT: list[tuple[dict[str, object], str]] = [
    (access | {"lang": "pt"}, f"Nota {i}: auditoria da VPN, orçamento e incidente de segurança.")
    for i in range(12)
    for access in [[{"visibility": "private", "owner_id": "zoe"}, {"sensitivity": 3},
                    {"visibility": "org", "org_id": "beta"}][i % 3]]
]  # fmt: skip
#: A fusion per language, so that the language a query is searched in shows in fused scores.
BY_LANG = {"pt": {"weight_bm25": 0.8, "weight_semantic": 0.2, "rrf_k": 5}}


def test_hidden_documents_move_no_search_score(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, tiny_cross_encoder: Path
) -> None:
    """Every score of a visible hit (bm25, semantic, fused by weights and by RRF, rerank) and
    the query's language and fusion stay put, to 1e-9, when hidden documents are added."""
    settings = TrilhaSettings(graph_backend="none", fusion_by_lang=BY_LANG)
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.use_reranker(CrossEncoderReranker(str(tiny_cross_encoder), precision="fp32"))
        assert not ws.ingest(documents(SEEN, "s")).refused
        runs = [(w, q, m) for w in PRINCIPALS for q in QUERIES for m in ("weighted", "rrf")]

        def seen(principal: Principal, query: str, merge: str) -> tuple[object, ...]:
            asked = {"top_k": 20, "principal": principal, "merge": merge}
            planned = ws.plan(query, **asked)
            scores = {
                h.unit.unit_id: (h.scores.bm25, h.scores.semantic, h.scores.fused)
                for h in ws.search(query, **asked).hits
            }
            reranked = {h.unit.unit_id: h.scores.rerank for h in ws.search(
                query, **asked, rerank=True).hits}  # fmt: skip
            fusion = planned.fusion
            return planned.lang, fusion.weights, fusion.rrf_k, scores, reranked

        before = {(w, q, m): seen(PRINCIPALS[w], q, m) for w, q, m in runs}
        assert not ws.ingest(documents(HIDDEN + HIDDEN_PT, "h")).refused
        assert ws.searcher.lexical.unit_langs[0] == "pt"
        for who, query, merge in runs:
            *fusion, scores, reranked = seen(PRINCIPALS[who], query, merge)
            *was_fusion, was_scores, was_reranked = before[who, query, merge]
            assert fusion == was_fusion, (who, query, merge)
            assert scores.keys() == was_scores.keys() and reranked.keys() == was_reranked.keys()
            for unit_id, old in was_scores.items():
                assert all(map(close, old, scores[unit_id])), (who, query, merge, unit_id)
            for unit_id, old_rerank in was_reranked.items():
                assert close(old_rerank, reranked[unit_id]), (who, query, merge, unit_id)


def close(old: float | None, new: float | None) -> bool:
    """Both absent, or equal to 1e-9."""
    return (old is None) == (new is None) and (old is None or abs(old - (new or 0.0)) <= 1e-9)


def test_anonymous_zorblax_score_ignores_a_private_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's reproduction: deleting zoe's private note leaves the public note's score."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("---\nlang: en\n---\nZorblax is the public name of the plan.\n")
    (docs / "other.md").write_text("---\nlang: en\n---\nThe quarterly plan has no name yet.\n")
    (docs / "secret.md").write_text(
        "---\nlang: en\nvisibility: private\nowner_id: zoe\nsensitivity: 3\n---\n"
        "Zorblax Zorblax: the private merger behind the plan.\n"
    )
    ws = str(tmp_path / "ws")

    def score() -> float:
        assert main(["query", "-w", ws, "Zorblax", "--json"]) == 0
        hits = json.loads(capsys.readouterr().out)["hits"]
        assert hits[0]["unit"]["doc_id"] == "note"  # the dense side may add the other one
        return float(hits[0]["scores"]["bm25"])

    assert main(["ingest", "-q", "-w", ws, str(docs)]) == 0
    capsys.readouterr()
    with_secret = score()
    assert main(["ingest", "-q", "-w", ws, "--delete", "secret"]) == 0
    capsys.readouterr()
    assert abs(score() - with_secret) <= 1e-9


@pytest.mark.parametrize("merge", ["weighted", "rrf"])
def test_a_hidden_vector_outside_the_snapshot_moves_no_fused_score(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, merge: str
) -> None:
    """A hidden unit whose vector the dense index holds but the searched snapshot does not (a
    write under way, or one a kill left) is dropped before the sides are normalised: it moves
    no fused score of a caller who sees every unit of the snapshot."""
    settings = uncached(TrilhaSettings(graph_backend="none"))
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        assert not ws.ingest(documents(SEEN[:3], "s")).refused
        strays: list[str] = []

        def fused(query: str) -> dict[str, tuple[float | None, ...]]:
            result = ws.search(query, top_k=20, merge=merge)
            strays.extend(w for w in result.trace.warnings if "snapshot" in w)
            return {h.unit.unit_id: (h.scores.semantic_rank, h.scores.fused) for h in result.hits}

        before = {query: fused(query) for query in QUERIES}
        units, _ = units_of(documents(HIDDEN[:1], "h"))
        ws.searcher.dense.upsert(units, embedder.encode_documents([u.text for u in units]))
        for query in QUERIES:
            after = fused(query)
            assert after.keys() == before[query].keys()
            for unit_id, old in before[query].items():
                assert all(map(close, old, after[unit_id])), (query, unit_id)
        assert len(strays) == len(QUERIES)  # the dense side did return it each time
