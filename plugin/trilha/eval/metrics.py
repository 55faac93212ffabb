"""IR metrics through pytrec_eval (trec_eval's own implementation)."""

from __future__ import annotations

from collections.abc import Mapping

import pytrec_eval

Run = Mapping[str, Mapping[str, float]]


def _truncate(run: Run, depth: int) -> dict[str, dict[str, float]]:
    out = {}
    for qid, docs in run.items():
        top = sorted(docs.items(), key=lambda kv: -kv[1])[:depth]
        out[qid] = {d: float(s) for d, s in top}
    return out


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Run) -> dict[str, float]:
    """nDCG@10, Recall@100 and MRR@10, averaged over every judged query.

    A query with no results counts as 0 (it stays in the denominator).
    """
    judged = {q: dict(d) for q, d in qrels.items()}
    full = {q: dict(run.get(q, {})) for q in judged}
    main = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "recall.100"})
    mrr = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"})
    # trec_eval skips queries with an empty run; give them a dummy non-relevant document
    padded = {q: (docs or {"__none__": 0.0}) for q, docs in full.items()}
    per_q = main.evaluate(padded)
    per_q_mrr = mrr.evaluate({q: (d or {"__none__": 0.0}) for q, d in _truncate(full, 10).items()})
    n = len(judged)
    return {
        "ndcg@10": sum(v["ndcg_cut_10"] for v in per_q.values()) / n,
        "recall@100": sum(v["recall_100"] for v in per_q.values()) / n,
        "mrr@10": sum(v["recip_rank"] for v in per_q_mrr.values()) / n,
    }
