"""Turn source questions and passages into a BEIR folder with a seeded train/test split.

Every source module yields ``Passage`` and ``Question`` values; ``assemble`` dedupes the
passages, drops ambiguous questions, splits the queries and ``write_beir`` writes
``corpus.jsonl``, ``queries.jsonl``, ``qrels/train.tsv``, ``qrels/test.tsv`` and
``manifest.json`` (sizes and the sha256 of every source file read).
"""

from __future__ import annotations

import hashlib
import html
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20240612
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    """One retrievable text as the source has it; ``key`` is unique within the source."""

    key: str
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    """One query and the source keys of the passages relevant to it (grade 1)."""

    qid: str
    text: str
    relevant: frozenset[str]
    split: str | None = None  # "train" / "test" where the source fixes it


@dataclass
class EvalSet:
    """A built set: documents by id, query texts by id and qrels per split."""

    name: str
    docs: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)


def clean(text: str) -> str:
    """HTML entities decoded, whitespace collapsed to single spaces."""
    return _SPACE.sub(" ", html.unescape(text)).strip()


def assemble(
    name: str,
    passages: Iterable[Passage],
    questions: Iterable[Question],
    *,
    max_per_doc: int | None = None,
    test_fraction: float = 0.5,
) -> EvalSet:
    """Dedupe passages, drop ambiguous questions, cap questions per document, split."""
    docs, key_to_doc = _dedupe(passages)
    dropped: dict[str, int] = defaultdict(int)
    kept = _unambiguous(questions, key_to_doc, dropped)
    if max_per_doc is not None:
        kept = _cap_per_doc(kept, max_per_doc, dropped)
    splits = _split(kept, test_fraction)
    evalset = EvalSet(name=name, docs=docs, queries={}, dropped=dict(dropped))
    for split, items in splits.items():
        evalset.qrels[split] = {qid: {d: 1 for d in sorted(rel)} for qid, _, rel in items}
        evalset.queries.update({qid: text for qid, text, _ in items})
    return evalset


def _dedupe(
    passages: Iterable[Passage],
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    docs: dict[str, tuple[str, str]] = {}
    by_content: dict[tuple[str, str], str] = {}
    key_to_doc: dict[str, str] = {}
    for passage in passages:
        content = (clean(passage.title), clean(passage.text))
        if not content[1]:
            continue
        doc_id = by_content.get(content)
        if doc_id is None:
            doc_id = f"d{len(docs) + 1}"
            by_content[content] = doc_id
            docs[doc_id] = content
        key_to_doc[passage.key] = doc_id
    return docs, key_to_doc


Item = tuple[str, str, frozenset[str]]


def _unambiguous(
    questions: Iterable[Question], key_to_doc: dict[str, str], dropped: dict[str, int]
) -> list[tuple[Item, str | None]]:
    """Questions mapped to doc ids; a text asked of two different documents is dropped."""
    by_text: dict[str, list[tuple[Item, str | None]]] = defaultdict(list)
    for q in questions:
        text = clean(q.text)
        rel = frozenset(key_to_doc[k] for k in q.relevant if k in key_to_doc)
        if not text or not rel:
            dropped["no text or no relevant passage"] += 1
            continue
        by_text[text.casefold()].append(((q.qid, text, rel), q.split))
    kept: list[tuple[Item, str | None]] = []
    for same in by_text.values():
        if len({item[2] for item, _ in same}) > 1:
            dropped["same question, different passages"] += len(same)
            continue
        if len(same) > 1:
            dropped["duplicate question"] += len(same) - 1
        kept.append(same[0])
    return kept


def _cap_per_doc(
    kept: list[tuple[Item, str | None]], limit: int, dropped: dict[str, int]
) -> list[tuple[Item, str | None]]:
    shuffled = list(kept)
    random.Random(SEED).shuffle(shuffled)
    per_doc: dict[frozenset[str], int] = defaultdict(int)
    capped: list[tuple[Item, str | None]] = []
    for entry in shuffled:
        rel = entry[0][2]
        if per_doc[rel] < limit:
            per_doc[rel] += 1
            capped.append(entry)
    if len(capped) < len(kept):
        dropped[f"over {limit} questions per passage"] += len(kept) - len(capped)
    order = {entry[0][0]: i for i, entry in enumerate(kept)}
    return sorted(capped, key=lambda entry: order[entry[0][0]])


def _split(kept: list[tuple[Item, str | None]], test_fraction: float) -> dict[str, list[Item]]:
    """The source's split where it has one, else a seeded split by relevant-document group.

    Grouping keeps every question about one passage on the same side, so tuning on train
    never sees a test passage as a positive.
    """
    splits: dict[str, list[Item]] = {"train": [], "test": []}
    free = [item for item, split in kept if split is None]
    for item, split in kept:
        if split is not None:
            splits[split].append(item)
    groups = sorted({item[2] for item in free}, key=lambda g: sorted(g))
    random.Random(SEED).shuffle(groups)
    test_groups = set(groups[: round(len(groups) * test_fraction)])
    for item in free:
        splits["test" if item[2] in test_groups else "train"].append(item)
    return splits


def write_beir(evalset: EvalSet, out: Path, sources: Sequence[Path]) -> dict[str, object]:
    """Write the BEIR files and ``manifest.json``; returns the manifest."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for doc_id, (title, text) in evalset.docs.items():
            row = {"_id": doc_id, "title": title, "text": text}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for qid, text in evalset.queries.items():
            fh.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    for split, qrels in evalset.qrels.items():
        with (out / "qrels" / f"{split}.tsv").open("w", encoding="utf-8") as fh:
            fh.write("query-id\tcorpus-id\tscore\n")
            for qid, rel in qrels.items():
                fh.writelines(f"{qid}\t{doc_id}\t{grade}\n" for doc_id, grade in rel.items())
    manifest = _manifest(evalset, sources)
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    return manifest


def _manifest(evalset: EvalSet, sources: Sequence[Path]) -> dict[str, object]:
    lengths = [len(text.split()) for _, text in evalset.docs.values()]
    chars = [len(text) for _, text in evalset.docs.values()]
    return {
        "name": evalset.name,
        "seed": SEED,
        "docs": len(evalset.docs),
        "avg_doc_words": round(sum(lengths) / max(len(lengths), 1), 1),
        "avg_doc_chars": round(sum(chars) / max(len(chars), 1), 1),
        "queries": {split: len(q) for split, q in evalset.qrels.items()},
        "qrels": {split: sum(map(len, q.values())) for split, q in evalset.qrels.items()},
        "dropped": evalset.dropped,
        "sources": {str(p): _sha256(p) for p in sources},
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
