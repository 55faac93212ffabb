"""Court headnotes (ementas) of the TJAL: keyword heading -> the numbered body it heads.

A Brazilian ementa opens with a run of capitalised keyword sentences ("APELAÇÃO CRIMINAL.
ROUBO MAJORADO. DOSIMETRIA. ...") and, in many, goes on with numbered paragraphs that state
the holdings. The heading, lower-cased and without the outcome phrases ("RECURSO CONHECIDO
E PROVIDO", "UNANIMIDADE"), is the query; the body is the document. Ementas without a
body of at least ``MIN_BODY_WORDS`` words are left out.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from evalset import Passage, Question

MIN_BODY_WORDS = 30
MIN_HEADING_WORDS = 3
_SENTENCE = re.compile(r"(?<=[.;:])\s+")
_OUTCOME = re.compile(r"CONHECID|PROVID|UNANIM|MAIORIA|DECIS[ÃA]O UN", re.IGNORECASE)
_FIELDS = "<=>"
_EMENTA_FIELD = 7


def read_ementas(zip_path: Path) -> tuple[list[Passage], list[Question]]:
    """Bodies and headings of the ementas in ``dataset.zip`` (``<=>``-separated CSV)."""
    raw = zipfile.ZipFile(zip_path).read("dataset.csv").decode("utf-8")
    passages: list[Passage] = []
    questions: list[Question] = []
    for n, line in enumerate(raw.splitlines()[1:]):
        fields = line.strip().strip('"').split(_FIELDS)
        if len(fields) <= _EMENTA_FIELD:
            continue
        split = split_ementa(fields[_EMENTA_FIELD])
        if split is None:
            continue
        heading, body = split
        key = f"e{n}"
        passages.append(Passage(key=key, title="", text=body))
        questions.append(Question(qid=f"q{n}", text=heading, relevant=frozenset({key})))
    return passages, questions


def split_ementa(ementa: str) -> tuple[str, str] | None:
    """(query heading, body) of one ementa, or None when it has no usable body."""
    sentences = _SENTENCE.split(ementa.strip())
    start = next((i for i, s in enumerate(sentences) if _mostly_lower(s)), len(sentences))
    heading = [s for s in sentences[:start] if not _OUTCOME.search(s)]
    body = " ".join(sentences[start:])
    query = " ".join(heading).lower()
    if len(query.split()) < MIN_HEADING_WORDS or len(body.split()) < MIN_BODY_WORDS:
        return None
    return query, body


def _mostly_lower(sentence: str) -> bool:
    letters = [c for c in sentence if c.isalpha()]
    return len(letters) >= 10 and sum(c.islower() for c in letters) > len(letters) / 2
