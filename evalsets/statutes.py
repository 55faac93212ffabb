"""Brazilian administrative statutes annotated with public-exam items: item -> its article.

Each source ``.docx`` is one statute as a study edition: the articles in order, and after an
article the exam items ("concurso" questions) that were asked about it, written as
``(BOARD-YEAR[-ORG]): statement``. A document is one article (its caput, paragraphs and
items, with the exam tags removed); a query is one exam item; the article it follows is
relevant. An item printed under several articles is relevant to each of them. Editor's notes
(``#Atenção: ...``) are skipped.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

from evalset import Passage, Question

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
#: "(MPSC-2021-CESPE): statement": an exam item and the tag naming board and year.
_ITEM = re.compile(r"^\(([A-Z][^()]{1,40}?\d{4}[^()]{0,30})\)\s*:?\s*(?P<text>.+)$")
#: An exam tag inside an article's text, e.g. "(MPT-2013)", "(Anal. Judic./TRF3-2023)": a year
#: glued to "-" or "/", unlike the statute's own notes such as "(Incluído pela Lei nº 9.648,
#: de 1998)", which are kept.
_TAG = re.compile(
    r"\s*\((?!Reda|Inclu|Revog|Vide|Vig|Regul|Renum|Acresc|Promulg)"
    r"[^()]*[-/](?:19|20)\d\d\b[^()]*\)"
)
#: The editor's "base legal" after an item ("BL: art. 34, LC 73."): it names the answer.
_BASE_LEGAL = re.compile(r"\s*\bBL\s*:.*$")
_ARTICLE = re.compile(r"^Art\.\s*\d")


def docx_paragraphs(path: Path) -> Iterator[str]:
    """The non-empty paragraphs of a .docx, in order, with no-break spaces made plain."""
    root = ElementTree.fromstring(zipfile.ZipFile(path).read("word/document.xml"))
    for para in root.iter(f"{_W}p"):
        text = "".join(t.text or "" for t in para.iter(f"{_W}t")).replace("\xa0", " ").strip()
        if text:
            yield text


def read_statutes(folder: Path) -> tuple[list[Passage], list[Question], list[Path]]:
    """Articles and exam items of every .docx in ``folder`` (sorted by file name)."""
    files = sorted(folder.glob("*.docx"))
    passages: list[Passage] = []
    items: dict[str, set[str]] = {}
    for law, path in enumerate(files):
        lines = list(docx_paragraphs(path))
        title = lines[0] if lines else path.stem
        for article, (body, asked) in enumerate(_articles(lines)):
            key = f"{law}:{article}"
            passages.append(Passage(key=key, title=title, text=" ".join(body)))
            for text in asked:
                items.setdefault(text, set()).add(key)
    questions = [
        Question(qid=f"q{n + 1}", text=text, relevant=frozenset(keys))
        for n, (text, keys) in enumerate(items.items())
    ]
    return passages, questions, files


def _articles(lines: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """(article lines without exam tags, exam items asked about it) per article."""
    body: list[str] = []
    asked: list[str] = []
    for line in lines:
        if _ARTICLE.match(line):
            if body:
                yield body, asked
            body, asked = [_TAG.sub("", line)], []
            continue
        if not body or line.startswith("#"):
            continue  # preamble before the first article, or an editor's note
        item = _ITEM.match(line)
        if item:
            text = _BASE_LEGAL.sub("", item.group("text")).strip()
            if text:
                asked.append(text)
        elif not _is_heading(line):
            body.append(_TAG.sub("", line))
    if body:
        yield body, asked


def _is_heading(line: str) -> bool:
    """CAPÍTULO / TÍTULO / Seção lines and their all-capitals names end an article."""
    head = line.split(" ", 1)[0].upper()
    if head in {"CAPÍTULO", "TÍTULO", "SEÇÃO", "SUBSEÇÃO", "LIVRO", "PARTE"}:
        return True
    letters = [c for c in line if c.isalpha()]
    return len(letters) > 3 and all(c.isupper() for c in letters)
