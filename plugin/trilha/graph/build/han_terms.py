"""Chinese terms for the rule entity extractor: noun phrases read off jieba's part-of-speech tags.

Chinese has no capital letters to mark a name, so a term is a run of nouns
(:data:`NOUN_TAGS`), up to :data:`MAX_WORDS` words, within one run of Han characters:

* a verbal noun (``vn``: 检索, 工作) may only continue a phrase of common nouns, so ``全文检索``
  is a term and ``存储数据`` or ``阿里巴巴工作`` are not;
* one-character words at the end are dropped (时, 内: 'when', 'within');
* a phrase is kept when it has two or more words (``图数据库`` = 图 + 数据库), one word of three or
  more characters (``数据库``) or one proper noun (北京, 张伟); lone two-character common nouns
  (数据, 日志) are too generic. A lone place or organisation name is typed Place or
  Organization, anything else Concept.
"""

from __future__ import annotations

from typing import NamedTuple

from trilha.index.han import HAN_RUN, TaggedWord, has_han, tagged_words

#: Tags of the words a term is made of (jieba's ICTCLAS-style tag set).
NOUN_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "nw", "vn"})
#: Proper-noun tags. jieba-rs also tags words it does not know as ``nr`` (子图, 查询语言), so only
#: place and organisation names from its dictionary get a type other than Concept.
PROPER_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})
TYPES = {"ns": "Place", "nt": "Organization"}
MAX_WORDS = 4


class HanTerm(NamedTuple):
    """A term found in a text: its words joined, its type and its offset in the text."""

    name: str
    type: str
    start: int


def han_terms(text: str) -> list[HanTerm]:
    """Every term occurrence in the Han runs of ``text``, in text order."""
    if not has_han(text):
        return []
    out: list[HanTerm] = []
    for run in HAN_RUN.finditer(text):
        phrase: list[TaggedWord] = []
        for w in [*tagged_words(run.group()), None]:
            if w is not None and _joins(w, phrase) and len(phrase) < MAX_WORDS:
                phrase.append(w)
                continue
            term = _term(phrase)
            if term is not None:
                out.append(term._replace(start=run.start() + term.start))
            phrase = [w] if w is not None and w.tag in NOUN_TAGS and w.tag != "vn" else []
    return out


def _joins(w: TaggedWord, phrase: list[TaggedWord]) -> bool:
    """A noun joins the phrase; a verbal noun only one that ends with a common or verbal noun."""
    if w.tag == "vn":
        return bool(phrase) and phrase[-1].tag in {"n", "vn"}
    return w.tag in NOUN_TAGS


def _term(phrase: list[TaggedWord]) -> HanTerm | None:
    while phrase and len(phrase[-1].word) == 1:
        phrase = phrase[:-1]
    if not phrase:
        return None
    name = "".join(w.word for w in phrase)
    if len(phrase) == 1 and len(name) < 3 and phrase[0].tag not in PROPER_TAGS:
        return None
    type_ = TYPES.get(phrase[0].tag, "Concept") if len(phrase) == 1 else "Concept"
    return HanTerm(name, type_, phrase[0].start)
