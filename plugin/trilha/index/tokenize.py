"""Language-aware tokenisation for the lexical index: how a text in a language becomes the
tokens BM25 counts, on the index and the query side alike.

Tokens follow bm25s' defaults (``(?u)\\b\\w\\w+\\b``, lower-cased, stopwords removed,
Snowball stemmed), with the stopword list and stemmer of each unit's language. Accents are folded
after stemming so that 'decisão' and 'decisao' meet.

Portuguese text and words are first prepared (:class:`PortuguesePreparer`, its rules data in
``portuguese.yaml`` in this package); other languages go straight to the stemmer:

- text (:meth:`PortuguesePreparer.text`): a number's thousands dots are dropped (``13.709`` ->
  ``13709``, one token rather than ``13`` and ``709``) and ordinal indicators after a digit are
  unified (``5°``, ``5ª`` -> ``5º``);
- words (:meth:`PortuguesePreparer.words`, on lower-case words): citation words take one form
  (``artigo``, ``arts`` -> ``art``) and plurals in ``-ões``/``-ães``/``-ãos`` become ``-ão``
  (``-oes`` becomes ``-ao``), which Snowball would otherwise stem apart from the singular
  (``decisões`` and ``decisão``);
- markers of "número" (``nº``) are extra stopwords (:attr:`PortuguesePreparer.stopwords`).

Abbreviations of courts, appeals and codes (``STJ``, ``REsp``, ``CC``) are left as they are:
adding their expansions beside them lowered nDCG@10 on the legal sets (evalsets/LEXICAL.md).

Chinese has no spaces, so the default ``\\w+`` tokeniser would take a whole clause as one token
and a query word would never meet it. Every run of Han characters is therefore cut out first and
segmented by the jieba-rs segmenter (``rjieba``) whatever language the unit claims (documents
often arrive without one and default to 'en'), so ``图数据库`` meets a document that contains it
even when that document was ingested as 'en':

* :func:`search_words`: jieba's search mode (the words and the dictionary words inside longer
  ones: ``数据库系统`` → 数据 据库 系统 数据库 数据库系统), less a short list of particles, for BM25
  on both the index and the query side;
* :func:`tagged_words`: words with their part-of-speech tags and offsets, for entity extraction.

rjieba (MIT) carries its dictionary inside its wheel; it is imported on the first Han text, so
text without Han characters never loads it.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import Stemmer
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trilha.errors import ConfigurationError, one_line
from trilha.index.language import detect_language, primary_code

if TYPE_CHECKING:
    from rjieba import Jieba


# --- Han runs and their words ---------------------------------------------------------------------

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


# --- Portuguese text and words, prepared for the Snowball stemmer ---------------------------------

# the dot first: the engine then scans for "." instead of trying the look-behind everywhere
_THOUSANDS_DOT = re.compile(r"\.(?<=\d\.)(?=\d{3}(?!\d))")


class PortugueseRules(BaseModel):
    """The contents of ``portuguese.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    number_markers: frozenset[str] = Field(description="Lower-case words dropped as stopwords.")
    ordinal_marks: tuple[str, ...] = Field(
        min_length=1, description="Ordinal indicators after a digit; all become the first."
    )
    word_forms: dict[str, str] = Field(description="Lower-case word -> the form it becomes.")
    ao_plurals: dict[str, str] = Field(description="Plural ending -> its singular ('ões' -> 'ão').")


class PortuguesePreparer:
    """Applies :class:`PortugueseRules` to text (:meth:`text`) and to words (:meth:`words`)."""

    def __init__(self, rules: PortugueseRules) -> None:
        marks = "".join(re.escape(m) for m in rules.ordinal_marks)
        # the mark first, for the same reason as _THOUSANDS_DOT
        self._ordinal = re.compile(rf"[{marks}](?<=\d[{marks}])")
        self._ordinal_mark = rules.ordinal_marks[0]
        self._forms = rules.word_forms
        self._singulars = rules.ao_plurals
        self._plurals = tuple(rules.ao_plurals)
        self.stopwords = rules.number_markers

    def text(self, text: str) -> str:
        """``text`` with thousands dots removed from numbers and ordinal indicators unified."""
        return self._ordinal.sub(self._ordinal_mark, _THOUSANDS_DOT.sub("", text))

    def words(self, words: list[str]) -> list[str]:
        """Lower-case ``words`` with citation forms unified and -ão plurals made singular."""
        forms = self._forms
        return [self._singular(w) if w.endswith(self._plurals) else forms.get(w, w) for w in words]

    def _singular(self, word: str) -> str:
        ending = next(e for e in self._plurals if word.endswith(e))
        return word[: -len(ending)] + self._singulars[ending]


def load_rules(text: str, name: str) -> PortugueseRules:
    """Rules from YAML ``text``; a bad file is one :class:`ConfigurationError` line."""
    try:
        return PortugueseRules.model_validate(yaml.safe_load(text))
    except yaml.YAMLError as e:
        raise ConfigurationError(f"{name}: not valid YAML ({e})") from e
    except ValidationError as e:
        raise ConfigurationError(f"{name}: {one_line(e)}") from e


@functools.cache
def default_preparer() -> PortuguesePreparer:
    """The preparer of the rules shipped with trilha, built once."""
    source = resources.files(__package__) / "portuguese.yaml"
    return PortuguesePreparer(load_rules(source.read_text(encoding="utf-8"), "portuguese.yaml"))


# --- Tokens ---------------------------------------------------------------------------------------

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: Bumped whenever :func:`tokenize` changes its output: a workspace whose stored tokens carry
#: another version re-tokenises them when it opens (1: Snowball per language; 2: Han segmented;
#: 3: Portuguese numbers, citations and -ão plurals prepared before stemming).
TOKENIZER_VERSION = "3"

_STEMMER_NAMES = {
    "en": "english",
    "pt": "portuguese",
    "es": "spanish",
    "fr": "french",
    "de": "german",
    "it": "italian",
    "nl": "dutch",
}


def _bm25s_stopwords() -> ModuleType:
    """bm25s' stopword lists: its ``stopwords`` module, read without running bm25s' package,
    which imports scipy (a quarter of a second) that the tokenizer never uses."""
    loaded = sys.modules.get("bm25s.stopwords")
    package = importlib.util.find_spec("bm25s") if loaded is None else None
    if loaded is not None or package is None or not package.submodule_search_locations:
        from bm25s import stopwords  # says so when bm25s is missing

        lists: ModuleType = stopwords
        return lists
    path = Path(package.submodule_search_locations[0]) / "stopwords.py"
    spec = importlib.util.spec_from_file_location("trilha.index._bm25s_stopwords", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot read bm25s' stopwords from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BM25S = _bm25s_stopwords()
#: bm25s' stopword lists by language (read once here; :func:`stopwords` adds the pt extras).
STOPWORDS = {
    "en": _BM25S.STOPWORDS_EN,
    "pt": _BM25S.STOPWORDS_PORTUGUESE,
    "es": _BM25S.STOPWORDS_SPANISH,
    "fr": _BM25S.STOPWORDS_FRENCH,
    "de": _BM25S.STOPWORDS_GERMAN,
    "it": _BM25S.STOPWORDS_ITALIAN,
    "nl": _BM25S.STOPWORDS_DUTCH,
}


def base_lang(lang: str | None) -> str:
    """'pt-BR' -> 'pt'; unknown or empty -> 'en'."""
    code = primary_code(lang)
    return code if code in _STEMMER_NAMES else "en"


def fold_accents(token: str) -> str:
    """``token`` without its accents (NFKD, combining marks dropped); ASCII is returned as is."""
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=16)
def _stemmer(lang: str) -> Any:
    return Stemmer.Stemmer(_STEMMER_NAMES[lang])


@lru_cache(maxsize=16)
def _stopset(lang: str) -> frozenset[str]:
    extra = default_preparer().stopwords if lang == "pt" else frozenset()
    return frozenset(STOPWORDS[lang]) | extra


def stopwords(lang: str | None) -> frozenset[str]:
    """The (lower-case) words :func:`tokenize` drops from a ``lang`` text."""
    return _stopset(base_lang(lang))


def tokenize(text: str, lang: str | None = "en") -> list[str]:
    """Tokens of ``text`` in ``lang``: lower-cased, stopwords out, stemmed, accents folded;
    then the words of its Han runs (any ``lang``)."""
    code = base_lang(lang)
    return _analysed(text, code, _stopset(code))


def _analysed(text: str, code: str, stop: frozenset[str]) -> list[str]:
    """:func:`tokenize` with the analyser of ``code`` and the stopwords ``stop``."""
    han = has_han(text)
    rest = HAN_RUN.sub(" ", text) if han else text
    if code == "pt":
        prepare = default_preparer()
        found = _TOKEN.findall(prepare.text(rest).lower())
        words = prepare.words([w for w in found if w not in stop])
    else:
        words = [w for w in _TOKEN.findall(rest.lower()) if w not in stop]
    tokens = [fold_accents(s) for s in _stemmer(code).stemWords(words)]
    return tokens + search_words(text) if han else tokens


#: Word -> token per language for :func:`token_set` (cleared past :data:`_MEMO_WORDS` words).
_MEMO: dict[str, dict[str, str]] = {}
_MEMO_WORDS = 200_000


def token_set(text: str, lang: str | None) -> frozenset[str]:
    """``frozenset(tokenize(text, lang))``, faster over many texts: each distinct word is
    stemmed once per process (up to :data:`_MEMO_WORDS` words, then the memo starts again).
    Portuguese and Han text take :func:`tokenize` itself (their preparation is not per word)."""
    code = base_lang(lang)
    if code == "pt" or has_han(text):
        return frozenset(tokenize(text, lang))
    stop = _stopset(code)
    words = {w for w in _TOKEN.findall(text.lower()) if w not in stop}
    memo = _MEMO.get(code)
    if memo is None or len(memo) > _MEMO_WORDS:
        memo = _MEMO[code] = {}
    new = [w for w in words if w not in memo]
    if new:
        stems = _stemmer(code).stemWords(new)
        memo.update(zip(new, (fold_accents(t) for t in stems), strict=True))
    return frozenset(memo[w] for w in words)


#: A query holding at least this many stopwords of one of its index's languages, and none of
#: the others', is in that language without the detector being run (``what does the court
#: say``: en). On 6,180 queries of seven evaluation sets in a pt and en index the rule decides
#: 78% of them; lingua among the two agrees on 99.0% of those, is unsure of 1.0%, and reads two
#: Portuguese questions (``O que diz a Tese de Church-Turing?``) as English.
STOPWORD_EVIDENCE = 2
_WORD = re.compile(r"\w+")
#: Function words that tell English apart, beside its 33 stopwords (Lucene's list, which BM25
#: keeps; these are not dropped from any text): questions are mostly made of them.
_TELLS = """
what which who whom whose why when where how does did do done doing has have had having were been
being am can could should would may might must shall about from after before between under over
during without within through against because while than those them our your his her its we you
he she me my any all each other some most more only very also
"""
_ENGLISH_TELLS = frozenset(_TELLS.split())


def _telling(code: str) -> frozenset[str]:
    return _stopset(code) | _ENGLISH_TELLS if code == "en" else _stopset(code)


@lru_cache(maxsize=16)
def _own_stopwords(codes: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Each language's stopwords (English's with :data:`_ENGLISH_TELLS`) that no other of
    ``codes`` has."""
    return {
        code: _telling(code).difference(*(_telling(o) for o in codes if o != code))
        for code in codes
    }


def query_language_among(text: str, codes: Sequence[str]) -> str | None:
    """Which of ``codes`` (an index's analysers, two or more) the query ``text`` is written in,
    or None when unsure: told by its stopwords when :data:`STOPWORD_EVIDENCE` or more are one
    language's alone and none another's (no language model is loaded), else by lingua among
    those languages (:func:`~trilha.index.language.detect_language`)."""
    own = _own_stopwords(tuple(codes))
    words = _WORD.findall(text.lower())
    counts = {code: sum(w in stop for w in words) for code, stop in own.items()}
    told = [code for code, n in counts.items() if n >= STOPWORD_EVIDENCE]
    if len(told) == 1 and sum(counts.values()) == counts[told[0]]:
        return told[0]
    return detect_language(text, among=codes)


def query_language(text: str, langs: Sequence[str]) -> str:
    """The language a query is searched in, among ``langs`` (an index's languages, most
    frequent first): the only one, else the one it is written in
    (:func:`query_language_among`) when the index holds it, else the most frequent (a short
    query such as 'dano moral' is often undecided)."""
    if len(langs) <= 1:
        return langs[0] if langs else "en"
    detected = query_language_among(text, _codes(langs))
    return detected if detected is not None and detected in langs else langs[0]


def query_analysers(text: str, langs: Iterable[str]) -> list[str]:
    """The analysers a query is tokenised with in an index holding ``langs`` (most frequent
    first): the index's only one; else, when the query's language is told among the index's
    languages (:func:`query_language_among`), the index's most frequent language and the
    query's; else (a query the detector is unsure of, an id) all of them."""
    codes = _codes(langs)
    if len(codes) == 1:
        return codes
    detected = query_language_among(text, codes)
    if detected is None or base_lang(detected) not in codes:
        return codes
    return [c for c in codes if c in (codes[0], base_lang(detected))]


def _codes(langs: Iterable[str]) -> list[str]:
    """The analysers of ``langs``, each once, in order (none: English)."""
    return list(dict.fromkeys(base_lang(lang) for lang in langs)) or ["en"]


def _choices(codes: list[str]) -> list[list[str]]:
    """Every list :func:`query_analysers` may return for an index of ``codes``, whatever the
    query's language: the first alone, the first with each other one, all of them."""
    if len(codes) == 1:
        return [codes]
    pairs = [[codes[0], code] for code in codes[1:]]
    return [[codes[0]], *pairs, *([codes] if len(codes) > 2 else [])]


def tokenize_query(
    text: str, langs: Iterable[str], known: Callable[[str], bool] | None = None
) -> list[str]:
    """Query tokens for an index holding ``langs`` (most frequent first), with the analysers
    of :func:`query_analysers`.

    The first analyser's tokens keep their multiplicity (as BM25 expects); tokens that only another
    analyser produces are appended once, so a pt query still meets pt-stemmed units in an index
    that is mostly en, and an en-only index sees exactly the en analysis.

    A minority of units in another language must not decide every query: each analyser also drops
    the others' stopwords (the fr analyser would keep "the" and "of", rare terms in an English
    collection, held only by the few units stored as fr: a misdetected abstract, a bilingual page),
    and an English query is not given the fr stems ("cel" for "cells") that only those units hold.

    With ``known`` (whether the index holds a token), only the tokens it holds come back, and the
    query's language is detected only when it changes them: when every list of analysers the
    detection may pick gives the same held tokens in the same order, the detector is not run (a
    first detection loads the models of the index's languages, 0.2-0.4 s each; ``'VPN laptop'``
    or ``'orçamento de TI'`` in a pt and en index are the same held tokens either way). The
    tokens are those the detection would have given, less tokens no row holds, which score
    nothing.
    """
    codes = _codes(langs)
    if known is None:
        return _analysed_with(text, query_analysers(text, codes))
    held = functools.lru_cache(maxsize=None)(known)
    kept = [[t for t in _analysed_with(text, c) if held(t)] for c in _choices(codes)]
    if all(k == kept[0] for k in kept[1:]):
        return kept[0]
    return [t for t in _analysed_with(text, query_analysers(text, codes)) if held(t)]


def _analysed_with(text: str, codes: list[str]) -> list[str]:
    """``text``'s tokens with the analysers ``codes``, as :func:`tokenize_query` takes them."""
    stop = frozenset().union(*(_stopset(code) for code in codes))
    tokens = _analysed(text, codes[0], stop)
    seen = set(tokens)
    for code in codes[1:]:
        for tok in _analysed(text, code, stop):
            if tok not in seen:
                seen.add(tok)
                tokens.append(tok)
    return tokens
