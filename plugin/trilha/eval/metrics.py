"""IR metrics through pytrec_eval (trec_eval's own implementation): the one nDCG of trilha
(``trilha eval``'s, and the one ``trilha tune`` fits on)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from trilha.errors import requires_extra

with requires_extra("eval", "nDCG scoring (pytrec-eval)"):
    import pytrec_eval

Run = Mapping[str, Mapping[str, float]]


def _truncate(run: Run, depth: int) -> dict[str, dict[str, float]]:
    out = {}
    for qid, docs in run.items():
        top = sorted(docs.items(), key=lambda kv: -kv[1])[:depth]
        out[qid] = {d: float(s) for d, s in top}
    return out


def _padded(run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """trec_eval skips queries with an empty run; give them a dummy non-relevant document."""
    return {q: (dict(docs) or {"__none__": 0.0}) for q, docs in run.items()}


def ndcg_per_query(
    qrels: Mapping[str, Mapping[str, int]], ranked: Mapping[str, Sequence[str]]
) -> dict[str, float]:
    """nDCG@10 of each judged query's documents, ranked best first (trec_eval's
    ``ndcg_cut_10``, linear gains); a query with no list, or no relevant document, scores 0."""
    judged = {q: dict(d) for q, d in qrels.items()}
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
    full = _padded({q: run.get(q, {}) for q in judged})
    per_q = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"}).evaluate(full)
    return {q: per_q[q]["ndcg_cut_10"] if q in per_q else 0.0 for q in judged}


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Run) -> dict[str, float]:
    """nDCG@10, Recall@100 and MRR@10, averaged over every judged query.

    A query with no results counts as 0 (it stays in the denominator).
    """
    judged = {q: dict(d) for q, d in qrels.items()}
    full = {q: dict(run.get(q, {})) for q in judged}
    main = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "recall.100"})
    mrr = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"})
    per_q = main.evaluate(_padded(full))
    per_q_mrr = mrr.evaluate(_padded(_truncate(full, 10)))
    n = len(judged)
    return {
        "ndcg@10": sum(v["ndcg_cut_10"] for v in per_q.values()) / n,
        "recall@100": sum(v["recall_100"] for v in per_q.values()) / n,
        "mrr@10": sum(v["recip_rank"] for v in per_q_mrr.values()) / n,
    }
