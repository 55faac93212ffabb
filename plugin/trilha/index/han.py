"""Chinese (Han) text: where its runs are, and its words, by the jieba-rs segmenter (``rjieba``).

Chinese has no spaces, so the default ``\\w+`` tokeniser takes a whole clause as one token and a
query word never meets it. Every run of Han characters is therefore segmented, whatever language
the unit claims (documents often arrive without one and default to 'en'):

* :func:`search_words`: jieba's search mode (the words and the dictionary words inside longer
  ones: ``数据库系统`` → 数据 据库 系统 数据库 数据库系统), less a short list of particles, for BM25
  on both the index and the query side;
* :func:`tagged_words`: words with their part-of-speech tags and offsets, for entity extraction.

rjieba (MIT) carries its dictionary inside its wheel; it is imported on the first Han text, so
text without Han characters never loads it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from rjieba import Jieba

#: The CJK Unified Ideographs blocks (basic, extension A, compatibility, extensions B–H).
HAN_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
HAN_RUN = re.compile(f"[{HAN_CHARS}]+")

#: Particles, pronouns and conjunctions: frequent, never what a query is about. (bm25s'
#: 841-word Chinese list also drops content words such as 安全 'security' and 个人 'personal'.)
_PARTICLES = """
的 地 得 了 着 过 是 在 和 与 及 或 也 都 就 而 并 被 把 将 对 从 以 之 其 这 那
我 你 他 她 它 们 吗 呢 吧 啊 呀 么 什么 怎么 如何 哪些 哪个 为什么 有 没有 不 很
还 又 再 已 已经 所 所以 因为 但是 但 如果 因此 以及 一个 一种 这个 那个 这些 那些
我们 你们 他们 它们
"""
STOPWORDS_ZH = frozenset(_PARTICLES.split())


class TaggedWord(NamedTuple):
    """A segmented word: its text, jieba part-of-speech tag and offsets in the run."""

    word: str
    tag: str
    start: int
    end: int


def has_han(text: str) -> bool:
    """True when ``text`` holds at least one Han character."""
    return HAN_RUN.search(text) is not None


@lru_cache(maxsize=1)
def _segmenter() -> Jieba:
    from rjieba import Jieba

    return Jieba()


def search_words(text: str) -> list[str]:
    """Search-mode words of every Han run in ``text``, particles left out."""
    jieba = _segmenter()
    return [
        w
        for run in HAN_RUN.findall(text)
        for w in jieba.cut_for_search(run)
        if w not in STOPWORDS_ZH
    ]


def tagged_words(run: str) -> list[TaggedWord]:
    """The words of one Han run, in order, with tags and offsets (they tile the run)."""
    out, pos = [], 0
    for word, tag in _segmenter().tag(run):
        out.append(TaggedWord(word, tag, pos, pos + len(word)))
        pos += len(word)
    return out
