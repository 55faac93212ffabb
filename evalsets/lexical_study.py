"""The Portuguese lexical study behind evalsets/LEXICAL.md: BM25-only nDCG@10 per analysis variant.

Usage: ``PYTHONPATH=plugin python evalsets/lexical_study.py [--sets DIR] [--rslp DIR]``.
Every variant tokenises the corpus and the queries of each set the same way and is scored with
bm25s as trilha's lexical index does (Lucene variant, k1 1.5, b 0.75, one unit per document,
title + text), on the train and the test qrels. Prints a Markdown table; a paired bootstrap
(2,000 resamples of the queries) marks with * a difference from the first row whose 95 %
interval excludes 0. ``--rslp`` is a folder holding the RSLP rule files (``step0.pt`` ...
``step6.pt``) read by NLTK's ``RSLPStemmer``; they are not part of trilha, and without them the
RSLP row is skipped.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import bm25s
import numpy as np
import pytrec_eval
import Stemmer
from bm25s import stopwords as bm25s_stopwords

from trilha.index.tokenize import tokenize

SETS = ["statutes-adm", "tjal-ementas", "squad-pt", "pira-pt", "faquad"]
TOKEN = re.compile(r"(?u)\b\w\w+\b")
Tok = Callable[[str], list[str]]


def fold(word: str) -> str:
    nfkd = unicodedata.normalize("NFKD", word)
    return "".join(c for c in nfkd if not unicodedata.combining(c))


# -- stemmers -----------------------------------------------------------------------------------
SNOWBALL = Stemmer.Stemmer("portuguese")
PLURAL = [("ões", "ão"), ("ães", "ão"), ("ãos", "ão"), ("ais", "al"), ("éis", "el"),
          ("eis", "el"), ("óis", "ol"), ("ns", "m"), ("res", "r"), ("les", "l"), ("zes", "z"),
          ("s", "")]  # fmt: skip
PLURAL_KEEP = {"lápis", "pires", "cais", "mais", "mas", "menos", "país", "após", "atrás",
               "através", "gás", "ônibus", "vírus", "tênis", "pois", "depois", "dois", "três",
               "simples", "ambos", "ambas", "óculos", "férias"}  # fmt: skip


def plural(w: str) -> str:
    """Plural endings only (own rules)."""
    if w in PLURAL_KEEP or len(w) < 4:
        return w
    for suffix, singular in PLURAL:
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            return w if suffix == "s" and w[-2] in "su" else w[: -len(suffix)] + singular
    return w


def light(w: str) -> str:
    """Plural, then a final a/o/e dropped (gender): 'meninas' -> 'menin'."""
    w = plural(w)
    return w[:-1] if len(w) > 4 and w[-1] in "aoe" else w


def rslp_stemmer(rules: Path) -> Callable[[str], str]:
    """NLTK's RSLPStemmer over rule files copied into a throwaway nltk_data folder."""
    import nltk
    from nltk.stem import RSLPStemmer

    data = Path(tempfile.mkdtemp()) / "nltk_data"
    (data / "stemmers" / "rslp").mkdir(parents=True)
    for f in rules.glob("step*.pt"):
        shutil.copy(f, data / "stemmers" / "rslp" / f.name)
    nltk.data.path.insert(0, str(data))
    return RSLPStemmer().stem


def ao_plurals(w: str) -> str:
    return re.sub(r"(?:ões|ães|ãos)$", "ão", w)


# -- stopwords ----------------------------------------------------------------------------------
SMALL_STOP = {"a", "o", "as", "os", "um", "uma", "uns", "umas", "de", "do", "da", "dos", "das",
              "em", "no", "na", "nos", "nas", "ao", "aos", "à", "às", "por", "pelo", "pela",
              "pelos", "pelas", "para", "com", "e", "ou", "que", "se", "num", "numa", "é",
              "foi"}  # fmt: skip
STOPS = {"bm25s": set(bm25s_stopwords.STOPWORDS_PORTUGUESE), "none": set(), "small": SMALL_STOP}

# -- legal normalisation prototypes -------------------------------------------------------------
NUMDOT = re.compile(r"\.(?<=\d\.)(?=\d{3}(?!\d))")
NUM_MARK = re.compile(r"\b[Nn](?:\.\s*)?[º°](?:s\b)?\s*")
ORDINAL = re.compile(r"(?<=\d)[°ºª]")
ARTICLE = re.compile(r"\b(?:artigos?|arts?)\b\.?", re.IGNORECASE)
ABBREVIATIONS = {  # abbreviation -> phrases that mean it
    "STF": ["Supremo Tribunal Federal"], "STJ": ["Superior Tribunal de Justiça"],
    "TST": ["Tribunal Superior do Trabalho"], "TSE": ["Tribunal Superior Eleitoral"],
    "TCU": ["Tribunal de Contas da União"], "TJ": ["Tribunal de Justiça"],
    "TRF": ["Tribunal Regional Federal"], "MP": ["Ministério Público"],
    "AGU": ["Advocacia-Geral da União"], "CGU": ["Controladoria-Geral da União"],
    "DPU": ["Defensoria Pública da União"], "INSS": ["Instituto Nacional do Seguro Social"],
    "REsp": ["Recurso Especial"], "AgInt": ["Agravo Interno"], "AgRg": ["Agravo Regimental"],
    "EDcl": ["Embargos de Declaração"], "HC": ["Habeas Corpus"], "MS": ["Mandado de Segurança"],
    "ADI": ["Ação Direta de Inconstitucionalidade"],
    "CF": ["Constituição Federal", "Constituição da República"], "CC": ["Código Civil"],
    "CPC": ["Código de Processo Civil", "NCPC"], "CP": ["Código Penal"],
    "CPP": ["Código de Processo Penal"], "CTN": ["Código Tributário Nacional"],
    "CDC": ["Código de Defesa do Consumidor", "lei 8078"],
    "CLT": ["Consolidação das Leis do Trabalho"],
    "ECA": ["Estatuto da Criança e do Adolescente", "lei 8069"],
    "LIA": ["Lei de Improbidade Administrativa", "lei 8429"],
    "LAI": ["Lei de Acesso à Informação", "lei 12527"],
    "LRF": ["Lei de Responsabilidade Fiscal", "lei complementar 101"],
    "LGPD": ["Lei Geral de Proteção de Dados", "lei 13709"],
    "LINDB": ["Lei de Introdução às Normas do Direito Brasileiro"],
}  # fmt: skip


def _phrase_pattern(phrase: str) -> str:
    parts = []
    for ch in phrase.lower():
        if ch in " -":
            parts.append(r"[\s\-]+")
        else:
            parts.append(f"[{ch}{fold(ch)}]" if fold(ch) != ch else re.escape(ch))
    return "".join(parts)


ALL_PHRASES = [(a, p) for a, ps in ABBREVIATIONS.items() for p in ps]
CANON = {fold(p.lower()).replace("-", " "): a.lower() for a, p in ALL_PHRASES}
_LONGEST_FIRST = sorted((_phrase_pattern(p) for _, p in ALL_PHRASES), key=len, reverse=True)
PHRASES = re.compile(r"\b(?:" + "|".join(_LONGEST_FIRST) + r")\b", re.IGNORECASE)
ABBR = re.compile(r"\b(?:" + "|".join(map(re.escape, ABBREVIATIONS)) + r")\b", re.IGNORECASE)
FIRST = {a.lower(): ps[0] for a, ps in ABBREVIATIONS.items()}


def _add_abbreviation(m: re.Match[str]) -> str:
    key = re.sub(r"[\s\-]+", " ", fold(m.group(0).lower()))
    return f"{m.group(0)} {CANON[key]}"


def legal(*steps: str) -> Callable[[str], str]:
    """A text normaliser running the named steps in order."""

    def norm(text: str) -> str:
        for step in steps:
            if step == "numbers":
                text = NUM_MARK.sub(" ", NUMDOT.sub("", text))
            elif step == "ordinals":
                text = ORDINAL.sub("º", text)
            elif step == "article":
                text = ARTICLE.sub("art", text)
            elif step == "paragraph":
                text = text.replace("§", " parágrafo ")
            elif step == "abbr-add":  # phrase -> phrase + its abbreviation
                text = PHRASES.sub(_add_abbreviation, text)
            elif step == "abbr-expand":  # abbreviation -> abbreviation + its phrase
                text = ABBR.sub(lambda m: f"{m.group(0)} {FIRST[m.group(0).lower()]}", text)
        return text

    return norm


def variant(
    stem: Callable[[str], str] | None = SNOWBALL.stemWord,
    stop: str = "bm25s",
    fold_at: str = "after",
    norm: Callable[[str], str] | None = None,
) -> Tok:
    """A tokenizer: normalise, lower, (fold), regex, stopwords, stem, (fold)."""
    stops = {fold(s) for s in STOPS[stop]} if fold_at == "before" else STOPS[stop]
    cached = lru_cache(maxsize=None)(stem) if stem is not None else None

    def tok(text: str) -> list[str]:
        low = (norm(text) if norm else text).lower()
        low = fold(low) if fold_at == "before" else low
        words = [w for w in TOKEN.findall(low) if w not in stops]
        out = [cached(w) for w in words] if cached else words
        return [fold(t) for t in out] if fold_at == "after" else out

    return tok


# -- scoring ------------------------------------------------------------------------------------
def read_set(folder: Path) -> tuple[list[tuple[str, str]], dict[str, str], dict[str, dict]]:
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open() if line.strip()]
    queries = {str(r["_id"]): r["text"] for r in map(json.loads, (folder / "queries.jsonl").open())}
    qrels = {}
    for split in ("train", "test"):
        rows = (folder / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]
        judged: dict[str, dict[str, int]] = {}
        for row in rows:
            q, d, s = row.split("\t")
            judged.setdefault(q, {})[d] = int(s)
        qrels[split] = judged
    pairs = [(str(d["_id"]), f"{d.get('title') or ''}\n{d.get('text', '')}") for d in docs]
    return pairs, queries, qrels


def per_query(folder_data, tok: Tok) -> dict[str, dict[str, float]]:
    """nDCG@10 of every judged query, per split."""
    docs, queries, qrels = folder_data
    bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    bm25.index([t or [""] for t in (tok(text) for _, text in docs)], show_progress=False)
    out = {}
    for split, judged in qrels.items():
        run = {}
        for qid in judged:
            ids = bm25.get_tokens_ids(tok(queries[qid]))
            scores = np.asarray(bm25.get_scores_from_ids(ids)) if ids else np.zeros(1)
            top = np.flatnonzero(scores > 0)
            if top.size > 100:
                top = top[np.argpartition(-scores[top], 99)[:100]]
            run[qid] = {docs[r][0]: float(scores[r]) for r in top} or {"__none__": 0.0}
        ev = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"})
        out[split] = {q: v["ndcg_cut_10"] for q, v in ev.evaluate(run).items()}
    return out


def significant(a: dict[str, float], b: dict[str, float], rng: np.random.Generator) -> bool:
    d = np.array([a[q] - b[q] for q in b])
    boots = d[rng.integers(0, len(d), (2000, len(d)))].mean(1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return bool(lo > 0 or hi < 0)


def variants(rslp: Path | None) -> dict[str, Tok]:
    snow = SNOWBALL.stemWord
    rows: dict[str, Tok] = {
        "Snowball, bm25s stopwords, fold after (trilha 0.1)": variant(),
        "stemmer: RSLP": variant(rslp_stemmer(rslp)) if rslp else None,
        "stemmer: none": variant(None),
        "stemmer: light (plural + gender, own)": variant(light),
        "stemmer: plural only (own)": variant(plural),
        "stemmer: Snowball after -ões/-ães/-ãos -> -ão": variant(lambda w: snow(ao_plurals(w))),
        "stopwords: none": variant(stop="none"),
        "stopwords: small (38 words, own)": variant(stop="small"),
        "fold: before stemming": variant(fold_at="before"),
        "fold: none": variant(fold_at="none"),
        "legal: numbers (13.709 -> 13709, nº dropped)": variant(norm=legal("numbers")),
        "legal: numbers + ordinals + artigo -> art": variant(
            norm=legal("numbers", "ordinals", "article")
        ),
        "legal: ... + § -> parágrafo": variant(
            norm=legal("numbers", "ordinals", "article", "paragraph")
        ),
        "legal: ... + phrase -> +abbreviation": variant(
            norm=legal("numbers", "ordinals", "article", "abbr-add")
        ),
        "legal: abbreviation -> +phrase": variant(norm=legal("abbr-expand")),
        "legal: both directions": variant(norm=legal("abbr-expand", "abbr-add")),
        "**shipped** (trilha.index.tokenize, pt)": lambda text: tokenize(text, "pt"),
    }
    return {k: v for k, v in rows.items() if v is not None}


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=Path, default=Path("/work/data/evalsets"))
    parser.add_argument("--rslp", type=Path, default=None)
    args = parser.parse_args()
    data = {name: read_set(args.sets / name) for name in SETS}
    rng = np.random.default_rng(0)
    print("| variant | " + " | ".join(SETS) + " | mean of 4 (no faquad) |")
    print("|---" * (len(SETS) + 2) + "|")
    base = None
    for label, tok in variants(args.rslp).items():
        scores = {name: per_query(data[name], tok) for name in SETS}
        base = base or scores
        cells, means = [], {"train": [], "test": []}
        for name in SETS:
            pair = []
            for split in ("train", "test"):
                q = scores[name][split]
                mean = sum(q.values()) / len(q)
                star = "*" if scores is not base and significant(q, base[name][split], rng) else ""
                pair.append(f"{mean:.4f}{star}")
                if name != "faquad":
                    means[split].append(mean)
            cells.append(" / ".join(pair))
        avg = " / ".join(f"{sum(v) / len(v):.4f}" for v in means.values())
        print(f"| {label} | " + " | ".join(cells) + f" | {avg} |", flush=True)


if __name__ == "__main__":
    main()
