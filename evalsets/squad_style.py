"""Reading-comprehension sources: a question is relevant to the paragraph it was asked on.

Two layouts are read: SQuAD JSON (``data[].paragraphs[].qas[]``; CMRC 2018, FaQuAD) and
the three-file "reestruturado" layout of the Portuguese SQuAD 1.1 translation
(``*-contexts.json``, ``*-questions.json``, ``*-answers.json``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from evalset import Passage, Question


def read_squad(path: Path, prefix: str) -> tuple[list[Passage], list[Question]]:
    """Paragraphs and questions of one SQuAD-format file; keys are prefixed by ``prefix``."""
    passages: list[Passage] = []
    questions: list[Question] = []
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    for a, article in enumerate(data):
        title = str(article.get("title", "")).replace("_", " ")
        for p, paragraph in enumerate(article["paragraphs"]):
            key = f"{prefix}:{a}:{p}"
            passages.append(Passage(key=key, title=title, text=str(paragraph["context"])))
            for n, qa in enumerate(paragraph["qas"]):
                qid = str(qa.get("id") or f"{prefix}-{a}-{p}-{n}")
                text = str(qa["question"])
                questions.append(Question(qid=qid, text=text, relevant=frozenset({key})))
    return passages, questions


def read_restructured(folder: Path, stem: str) -> tuple[list[Passage], list[Question]]:
    """The squad-v1.1-pt "reestruturado" files: contexts, questions, answers (qid -> ids)."""

    def load(part: str) -> object:
        return json.loads((folder / f"{stem}-{part}.json").read_text(encoding="utf-8"))

    contexts = load("contexts")
    questions = load("questions")
    assert isinstance(contexts, dict) and isinstance(questions, dict)
    passages = [
        Passage(
            key=str(c["context_id"]),
            title=str(c.get("title", "")).replace("_", " "),
            text=str(c["context"]),
        )
        for c in contexts["contexts"]
    ]
    return passages, list(_restructured_questions(questions["questions"]))


def _restructured_questions(rows: list[dict[str, object]]) -> Iterator[Question]:
    for row in rows:
        yield Question(
            qid=f"q{row['id_question']}",
            text=str(row["question"]),
            relevant=frozenset({str(row["id_context"])}),
        )
