"""Pirá 2.0 (ocean, Brazilian coast, climate): question -> its supporting text.

The supporting texts are Scopus abstracts and UN World Ocean Assessment excerpts. In
Portuguese they are the machine translation Pirá 2.0 ships (``abstract_translated_pt``)
and the questions the volunteers' own Portuguese ones (``question_pt_origin``); in English
the original texts (``abstract``) and the volunteers' English questions
(``question_en_origin``). The source's validation file is the train split and its test
file the test split (its train file is not in the repository snapshot).
"""

from __future__ import annotations

import csv
from pathlib import Path

from evalset import Passage, Question

FILES = {"validation.csv": "train", "test.csv": "test"}
#: Per language: the supporting text's column and the question's.
COLUMNS = {
    "pt": ("abstract_translated_pt", "question_pt_origin"),
    "en": ("abstract", "question_en_origin"),
}


def read_pira(folder: Path, lang: str = "pt") -> tuple[list[Passage], list[Question], list[Path]]:
    """Supporting texts and questions of the validation and test CSV files in ``lang``."""
    text_column, question_column = COLUMNS[lang]
    passages: list[Passage] = []
    questions: list[Question] = []
    files = [folder / name for name in FILES]
    for path in files:
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                key = row[text_column].strip()
                passages.append(Passage(key=key, title="", text=key))
                questions.append(
                    Question(
                        qid=row["id_qa"],
                        text=row[question_column],
                        relevant=frozenset({key}),
                        split=FILES[path.name],
                    )
                )
    return passages, questions, files
