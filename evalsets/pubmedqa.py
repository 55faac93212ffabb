"""PubMedQA's expert-labelled part (biomedical, English): question -> its abstract.

Each of the 1,000 PubMed articles of ``ori_pqal.json`` comes with a question (most are the
article's title rephrased as a yes/no question) and its abstract without the conclusion
(``CONTEXTS``, the sections joined in order). Document = that abstract, no title (the title
is the question); query = the question; relevant = its abstract. Split: the source's own,
the 500 articles of ``test_ground_truth.json`` are the test split and the other 500 train.
"""

from __future__ import annotations

import json
from pathlib import Path

from evalset import Passage, Question

FILES = ("ori_pqal.json", "test_ground_truth.json")


def read_pubmedqa(folder: Path) -> tuple[list[Passage], list[Question], list[Path]]:
    """Abstracts and questions of the labelled articles, split as the source splits them."""
    files = [folder / name for name in FILES]
    articles = json.loads(files[0].read_text(encoding="utf-8"))
    test = set(json.loads(files[1].read_text(encoding="utf-8")))
    passages: list[Passage] = []
    questions: list[Question] = []
    for pmid, article in articles.items():
        key = f"pmid-{pmid}"
        passages.append(Passage(key=key, title="", text=" ".join(article["CONTEXTS"])))
        questions.append(
            Question(
                qid=pmid,
                text=article["QUESTION"],
                relevant=frozenset({key}),
                split="test" if pmid in test else "train",
            )
        )
    return passages, questions, files
