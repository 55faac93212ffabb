"""What visibility costs a hybrid search when the caller may not see part of the corpus (issue 30,
item 3): BM25 statistics over the caller's visible rows, the dense side filtered by their rule.

Usage: ``PYTHONPATH=plugin python evalsets/visibility_cost.py [--data DIR] [--hidden 0.2]
[--queries 100] [--workspace DIR] [--out FILE]``.

``trilha bench``'s ``hybrid_weighted_visibility`` runs the bench principal's rule on a corpus
that is all public (SciFact), which every principal sees whole: the statistics are then those
of every row. Here one passage in ``1/--hidden`` is stored as ``visibility: org`` of an
organisation the bench principal is not in, and one workspace is searched (weighted merge, no
graph boost, top 10, no result cache) by two principals in turn on every query (which goes
first alternates, as the bench's paired ratios do):

- ``sees_all``: a member of that organisation, who sees every unit (no mask: the statistics
  of the whole index, the dense side unfiltered);
- ``masked``: the bench principal, who may not see the hidden passages (their row mask, the
  statistics of their visible rows, the dense side under their rule).

Prints and writes to ``--out`` both P50s, their ratio, and the hidden share.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from trilha.access import Principal
from trilha.eval.beir import BeirDataset, load_beir
from trilha.eval.principal import BENCH_PRINCIPAL
from trilha.eval.timing import WARMUP
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings, uncached
from trilha.workspace import Workspace

HIDDEN_ORG = "bench-hidden-org"
SEES_ALL = Principal(user_id="bench-admin", org_ids=[HIDDEN_ORG])


def documents(data: BeirDataset, every: int) -> Iterator[SourceDocument]:
    """The corpus, every ``every``-th passage visible to ``HIDDEN_ORG`` only."""
    for i, doc in enumerate(data.documents()):
        if i % every == 0:
            doc.meta.update(visibility="org", org_id=HIDDEN_ORG)
        yield doc


def paired(calls: list[Callable[[str], object]], texts: list[str]) -> list[list[float]]:
    """Per-call times (ms) of each call on every text, in turn, the first alternating."""
    for text in texts[:WARMUP]:
        for call in calls:
            call(text)
    times: list[list[float]] = [[] for _ in calls]
    for i, text in enumerate(texts):
        for side in range(len(calls)) if i % 2 == 0 else reversed(range(len(calls))):
            start = time.perf_counter()
            calls[side](text)
            times[side].append((time.perf_counter() - start) * 1000.0)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data/scifact")
    ap.add_argument("--hidden", type=float, default=0.2, help="share of hidden passages")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--workspace", help="workspace to build or reuse (default: a temporary one)")
    ap.add_argument("--out", default="results/visibility-cost-scifact.json")
    args = ap.parse_args()
    data = load_beir(Path(args.data), "test")
    texts = [q.text for q in data.queries[: args.queries]]
    settings = uncached(TrilhaSettings())
    with tempfile.TemporaryDirectory(prefix="trilha-visibility-") as tmp:
        folder = Path(args.workspace or tmp)
        with Workspace.open(folder, settings, create=True) as ws:
            ws.ingest(documents(data, round(1 / args.hidden)), progress=False)
            lexical = ws.searcher.lexical
            mask = ws.searcher.policies.get(BENCH_PRINCIPAL).row_mask(lexical.columns)
            assert ws.searcher.policies.get(SEES_ALL).sees_all(lexical.columns)
            hidden = 0.0 if mask is None else 1.0 - float(mask.mean())
            calls = [
                lambda q, p=p: ws.search(q, top_k=10, merge="weighted", kg=False, principal=p)
                for p in (SEES_ALL, BENCH_PRINCIPAL)
            ]
            base, masked = (float(np.percentile(t, 50)) for t in paired(calls, texts))
    report = {
        "dataset": data.name,
        "queries": len(texts),
        "hidden_share": round(hidden, 3),
        "p50_ms": {"sees_all": round(base, 2), "masked": round(masked, 2)},
        "masked_over_sees_all": round(masked / base, 3),
    }
    print(json.dumps(report))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
