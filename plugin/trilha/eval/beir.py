"""Read a BEIR-format folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from trilha.errors import BadRequestError
from trilha.ingest.loaders import SourceDocument

Qrels = dict[str, dict[str, int]]


class BeirQuery(BaseModel):
    """One test query."""

    query_id: str = Field(description="BEIR query id.")
    text: str = Field(description="Query text.")


class BeirDataset(BaseModel):
    """A BEIR dataset folder and its judged test queries."""

    name: str = Field(description="Folder name.")
    folder: Path = Field(description="Where it lives.")
    queries: list[BeirQuery] = Field(description="Queries that have judgements in the split.")
    qrels: Qrels = Field(description="query id -> doc id -> relevance grade.")

    def documents(self) -> Iterator[SourceDocument]:
        """The corpus as SourceDocuments (one unit per BEIR passage)."""
        with (self.folder / "corpus.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    yield SourceDocument(
                        doc_id=str(row["_id"]),
                        text=str(row.get("text", "")),
                        source_type="beir",
                        whole=True,
                        meta={"title": row.get("title") or None},
                    )

    def corpus_size(self) -> int:
        """Number of passages."""
        with (self.folder / "corpus.jsonl").open(encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())


def load_beir(folder: Path, split: str = "test") -> BeirDataset:
    """Load a BEIR folder; clear errors say which file is missing or malformed."""
    folder = Path(folder)
    for name in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (folder / name).exists():
            raise BadRequestError(
                f"{folder} is not a BEIR folder: {name} is missing (need corpus.jsonl, "
                f"queries.jsonl and qrels/{split}.tsv)"
            )
    qrels: Qrels = {}
    with (folder / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        for row in csv.reader(fh, delimiter="\t"):
            if len(row) < 3 or not row[2].strip().lstrip("-").isdigit():
                continue  # header or blank line
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    texts: dict[str, str] = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                texts[str(row["_id"])] = str(row["text"])
    queries = [
        BeirQuery(query_id=q, text=texts[q]) for q in sorted(qrels, key=_natural) if q in texts
    ]
    if not queries:
        raise BadRequestError(f"{folder}: no query of qrels/{split}.tsv is in queries.jsonl")
    return BeirDataset(
        name=folder.resolve().name,
        folder=folder,
        queries=queries,
        qrels={q.query_id: qrels[q.query_id] for q in queries},
    )


def _natural(key: str) -> tuple[int, str]:
    return (int(key), key) if key.isdigit() else (1 << 62, key)
