"""Entity extraction for the graph: the offline rule-based extractor (pt, en and zh), the
extractor contract and salience. The optional LLM extractor is
:mod:`trilha.graph.build.llm_extract`.

The rule extractor finds, per text unit:

1. known entities from a gazetteer (names and aliases, case-insensitive, longest first);
2. acronyms: all-capital tokens of 2+ letters (``STJ``, ``LGPD``, ``VPN``), except in shouted
   all-caps sentences;
3. capitalised noun phrases (``Superior Tribunal de Justiça``, ``Knowledge Graph``), allowing
   lower-case connectors inside (de, da, do, of, for, ...). A capitalised word that starts a
   sentence is dropped when it is a stopword ("The", "Em", "However"); a lone sentence-initial
   word is kept only if it also appears capitalised mid-sentence. An initial before a lower-case
   word (``H. pylori``, ``E. coli``) neither ends the sentence nor joins a phrase: SciFact's
   "Active H. pylori urease ..." gave the entity "Active H";
4. Chinese terms (:func:`han_terms`): noun phrases of each run of Han characters, whatever
   language the unit claims. Han characters end a capitalised phrase. Chinese has no capital
   letters to mark a name, so a term is a run of nouns (:data:`NOUN_TAGS`, read off jieba's
   part-of-speech tags), up to :data:`HAN_MAX_WORDS` words, within one run of Han characters:

   * a verbal noun (``vn``: 检索, 工作) may only continue a phrase of common nouns, so
     ``全文检索`` is a term and ``存储数据`` or ``阿里巴巴工作`` are not;
   * one-character words at the end are dropped (时, 内: 'when', 'within');
   * a phrase is kept when it has two or more words (``图数据库`` = 图 + 数据库), one word of
     three or more characters (``数据库``) or one proper noun (北京, 张伟); lone two-character
     common nouns (数据, 日志) are too generic. A lone place or organisation name is typed
     Place or Organization, anything else Concept.

Salience (:func:`salience`) combines frequency and first position, normalised to 0–1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from pydantic import BaseModel, Field

from trilha.graph.model import normalise_name
from trilha.index.tokenize import HAN_CHARS, HAN_RUN, TaggedWord, has_han, tagged_words
from trilha.types import TextUnit


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Words that are never an entity on their own, and drop from the start of a sentence (en + pt).
STOPWORDS = _words(
    """
a an the this that these those in on at for with however but and or if when while as it its we
our they their there here of to by from after before during since although because so then thus
also each every some many most all both no not what which who whom how why where i you he she my
your his her us them one any such other new first last next yes please note see today yesterday
tomorrow
o a os as um uma uns umas de da do das dos em no na nos nas para por com sem sobre entre e ou
mas se que quando como onde porque pois este esta estes estas esse essa esses essas isso isto
aquele aquela ele ela eles elas nós eu você vocês seu sua seus suas meu minha também já não sim
ao aos à às pelo pela pelos pelas segundo conforme assim então portanto contudo entretanto
todavia cada todo toda todos todas qual quais quem após antes durante desde embora caso hoje
ontem amanhã nesse nessa neste nesta deste desta desse dessa outro outra
later now still yet meanwhile finally moreover furthermore therefore hence instead indeed perhaps
maybe only even just again soon once recently currently usually often sometimes always never
depois agora ainda logo enfim finalmente além porém inclusive apenas somente sempre nunca
recentemente atualmente
"""
)
NON_ENTITIES = STOPWORDS | _words(
    """
january february march april may june july august september october november december monday
tuesday wednesday thursday friday saturday sunday
"""
)
#: Lower-case words allowed inside a capitalised phrase (Tribunal de Justiça, Bank of America).
CONNECTORS = _words("da das de del della der des di do dos du for la le of van von")

#: A sentence: up to a stop, except the stop of an initial before a lower-case word (H. pylori).
_SENTENCE = re.compile(r"(?:\b[A-Z]\.(?=[^\S\n]+[a-z])|[^.!?;:\n。！？；：])+")
_INITIAL = re.compile(r"[A-Z]\.")
#: A run of Han characters (a phrase breaker), or a word without Han characters.
_TOKEN = re.compile(rf"[{HAN_CHARS}]+|(?![{HAN_CHARS}])[^\W_](?:(?![{HAN_CHARS}])[\w'’-])*")
_MAX_PHRASE = 6


class ExtractedEntity(NamedTuple):
    """An entity found in one unit."""

    name: str
    type: str
    salience: float
    occurrences: int = 1


class KnownEntity(BaseModel):
    """A gazetteer entry."""

    name: str = Field(description="Canonical display name.")
    type: str = Field("Concept", description="Entity type recorded in the graph.")
    aliases: list[str] = Field(default_factory=list, description="Other spellings.")


Gazetteer = Mapping[str, str] | Iterable[KnownEntity]


class EntityExtractor(Protocol):
    """Anything that turns a unit into entities."""

    def extract(self, unit: TextUnit) -> list[ExtractedEntity]:
        """Entities of one unit, most salient first."""
        ...


def salience(count: int, max_count: int, first_pos: float, *, in_title: bool = False) -> float:
    """Salience in [0, 1] from frequency and position.

    ``(0.5 + 0.5 * log1p(count) / log1p(max_count)) * (1 - 0.5 * first_pos)``, plus 0.2 when the
    entity is in the title (capped at 1). ``first_pos`` is the first offset / text length.
    """
    freq = math.log1p(count) / math.log1p(max_count) if max_count > 0 else 0.0
    score = (0.5 + 0.5 * freq) * (1.0 - 0.5 * min(max(first_pos, 0.0), 1.0))
    return round(min(1.0, score + (0.2 if in_title else 0.0)), 4)


@dataclass
class _Seen:
    display: str
    type: str
    rank: int
    count: int = 0
    first: int = 0


@dataclass
class _Found:
    """Occurrences collected over one text."""

    seen: dict[str, _Seen] = field(default_factory=dict)
    initial_only: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    mid_caps: set[str] = field(default_factory=set)

    def add(self, display: str, type_: str, pos: int, rank: int) -> None:
        key = normalise_name(display)
        if not key or key in NON_ENTITIES or len(key) < 2:
            return
        s = self.seen.get(key)
        if s is None:
            s = self.seen[key] = _Seen(display, type_, rank, first=pos)
        elif rank < s.rank:
            s.display, s.type, s.rank = display, type_, rank
        s.count += 1
        s.first = min(s.first, pos)


def _marked(tok: str) -> bool:
    """Inner capitals or digits (GraphRAG, Neo4j): a name even at the start of a sentence."""
    return any(c.isupper() or c.isdigit() for c in tok[1:])


def _is_acronym(tok: str) -> bool:
    letters = [c for c in tok if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


class RuleEntityExtractor:
    """Offline entity extractor for Portuguese and English text."""

    def __init__(self, gazetteer: Gazetteer | None = None, *, max_entities: int = 20) -> None:
        entries = _entries(gazetteer)
        self._known: dict[str, tuple[str, str]] = {}
        for e in entries:
            for surface in (e.name, *e.aliases):
                if normalise_name(surface):
                    self._known[normalise_name(surface)] = (e.name, e.type)
        names = sorted(self._known, key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(_bounded(n) for n in names), re.IGNORECASE) if names else None
        )
        self.max_entities = max_entities

    def extract(self, unit: TextUnit) -> list[ExtractedEntity]:
        """Entities of ``unit`` (its title counts for salience)."""
        return self.extract_text(unit.text, title=unit.title)

    def __call__(self, units: Iterable[TextUnit]) -> dict[str, list[ExtractedEntity]]:
        """Entities per ``unit_id``."""
        return {u.unit_id: self.extract(u) for u in units}

    def extract_text(self, text: str, *, title: str | None = None) -> list[ExtractedEntity]:
        """Entities of a text, most salient first, at most ``max_entities``."""
        found = _Found()
        taken = self._gazetteer(text, found)
        for m in _SENTENCE.finditer(text):
            self._sentence(m.group(), m.start(), taken, found)
        for term in han_terms(text):
            if not any(a < term.start + len(term.name) and term.start < b for a, b in taken):
                found.add(term.name, term.type, term.start, 2)
        for key, hits in found.initial_only.items():
            if key in found.mid_caps or key in found.seen:
                for display, pos in hits:
                    found.add(display, "Concept", pos, 2)
        return self._rank(found, len(text), normalise_name(title or ""))

    def _gazetteer(self, text: str, found: _Found) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        if self._pattern is None:
            return spans
        for m in self._pattern.finditer(text):
            name, type_ = self._known[normalise_name(m.group())]
            found.add(name, type_, m.start(), 0)
            spans.append(m.span())
        return spans

    def _sentence(
        self, sent: str, offset: int, taken: list[tuple[int, int]], found: _Found
    ) -> None:
        toks = [
            (t.group(), offset + t.start(), offset + t.end())
            for t in _TOKEN.finditer(sent)
            if not any(a < offset + t.end() and offset + t.start() < b for a, b in taken)
        ]
        letters = [t for t, _, _ in toks if any(c.isalpha() for c in t)]
        shouting = len(letters) >= 4 and sum(_is_acronym(t) for t in letters) > 0.6 * len(letters)
        first_tok = _TOKEN.search(sent)
        first_start = offset + first_tok.start() if first_tok else -1
        phrase: list[tuple[str, int, int]] = []
        for tok, start, end in [*toks, ("", -1, -1)]:
            if tok and _INITIAL.match(sent, start - offset):
                self._flush(phrase, first_start, found)
                phrase = []
            elif tok and _is_acronym(tok) and not shouting:
                self._flush(phrase, first_start, found)
                found.add(tok, "Acronym", start, 1)
                phrase = []
            elif tok and (
                (tok[0].isupper() and not shouting) or (phrase and tok.casefold() in CONNECTORS)
            ):
                phrase.append((tok, start, end))
            else:
                self._flush(phrase, first_start, found)
                phrase = []

    def _flush(self, phrase: list[tuple[str, int, int]], first_start: int, found: _Found) -> None:
        while phrase and phrase[-1][0].casefold() in CONNECTORS:
            phrase.pop()
        initial = bool(phrase) and phrase[0][1] == first_start
        if initial and phrase[0][0].casefold() in STOPWORDS:
            phrase = phrase[1:]
            while phrase and phrase[0][0].casefold() in CONNECTORS:
                phrase = phrase[1:]
            initial = False
        if not phrase:
            return
        phrase = phrase[:_MAX_PHRASE]
        display = " ".join(t for t, _, _ in phrase)
        key = normalise_name(display)
        if initial and len(phrase) == 1 and not _marked(phrase[0][0]):
            found.initial_only.setdefault(key, []).append((display, phrase[0][1]))
            return
        if len(phrase) == 1:
            found.mid_caps.add(key)
        found.add(display, "Concept", phrase[0][1], 2)

    def _rank(self, found: _Found, length: int, title_key: str) -> list[ExtractedEntity]:
        if not found.seen:
            return []
        top = max(s.count for s in found.seen.values())
        out = [
            ExtractedEntity(
                s.display,
                s.type,
                salience(s.count, top, s.first / max(length, 1), in_title=_within(key, title_key)),
                s.count,
            )
            for key, s in found.seen.items()
        ]
        out.sort(key=lambda e: (-e.salience, normalise_name(e.name)))
        return out[: self.max_entities]


def _bounded(name: str) -> str:
    """A pattern for ``name`` as a whole word; Han characters need no word boundary."""
    body = re.escape(name).replace(r"\ ", r"\s+")
    left = "" if has_han(name[:1]) else r"(?<!\w)"
    right = "" if has_han(name[-1:]) else r"(?!\w)"
    return f"{left}{body}{right}"


def _within(key: str, text: str) -> bool:
    return bool(text) and re.search(_bounded(key), text) is not None


def _entries(gazetteer: Gazetteer | None) -> list[KnownEntity]:
    if gazetteer is None:
        return []
    if isinstance(gazetteer, Mapping):
        return [KnownEntity(name=k, type=v) for k, v in gazetteer.items()]
    return list(gazetteer)


def entities_in_query(text: str, gazetteer: Gazetteer | None = None) -> list[str]:
    """Entity names mentioned by a query text (for the KG boost), most salient first."""
    return [e.name for e in RuleEntityExtractor(gazetteer).extract_text(text)]


# --- Chinese terms --------------------------------------------------------------------------------

#: Tags of the words a term is made of (jieba's ICTCLAS-style tag set).
NOUN_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "nw", "vn"})
#: Proper-noun tags. jieba-rs also tags words it does not know as ``nr`` (子图, 查询语言), so only
#: place and organisation names from its dictionary get a type other than Concept.
PROPER_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})
HAN_TYPES = {"ns": "Place", "nt": "Organization"}
HAN_MAX_WORDS = 4


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
            if w is not None and _han_joins(w, phrase) and len(phrase) < HAN_MAX_WORDS:
                phrase.append(w)
                continue
            term = _han_term(phrase)
            if term is not None:
                out.append(term._replace(start=run.start() + term.start))
            phrase = [w] if w is not None and w.tag in NOUN_TAGS and w.tag != "vn" else []
    return out


def _han_joins(w: TaggedWord, phrase: list[TaggedWord]) -> bool:
    """A noun joins the phrase; a verbal noun only one that ends with a common or verbal noun."""
    if w.tag == "vn":
        return bool(phrase) and phrase[-1].tag in {"n", "vn"}
    return w.tag in NOUN_TAGS


def _han_term(phrase: list[TaggedWord]) -> HanTerm | None:
    while phrase and len(phrase[-1].word) == 1:
        phrase = phrase[:-1]
    if not phrase:
        return None
    name = "".join(w.word for w in phrase)
    if len(phrase) == 1 and len(name) < 3 and phrase[0].tag not in PROPER_TAGS:
        return None
    type_ = HAN_TYPES.get(phrase[0].tag, "Concept") if len(phrase) == 1 else "Concept"
    return HanTerm(name, type_, phrase[0].start)
