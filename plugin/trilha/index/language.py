"""Which language a text is in, offline: the language of a unit picks its lexical analyser.

Detection runs on lingua (``lingua-language-detector``, Apache-2.0; its n-gram models ship inside
the wheel), restricted to the languages trilha analyses (:data:`DETECTED`) so that short texts
are not read as some other language. Measured on UDHR sentences (≤ 60 characters) and articles
plus SciFact queries and abstracts: 0.995 correct on short texts and 1.000 on long ones (py3langid:
0.983 and 1.000, but 0.855 on short Portuguese). A language's models are loaded the first time a
detection needs them, once per process: all eight for a document (~2 s, ~200 MB), only its
index's languages for a query (a pt and en index: ~0.4 s), which is which of them it is written in.

A text whose best language is less than :data:`MIN_CONFIDENCE` sure (``'dano moral'``, an id, a
number) has no language: the caller decides (a query falls back to the index's main language). A
document that declares no language takes :func:`document_language`: the detected one only when it
is the collection's main language or at least :data:`MINORITY_CONFIDENCE` sure, else the main
language, so that a few English abstracts read as French (formulas, names, a French title) are not
indexed with French rules, keeping "the" and "of" as rare, heavy terms.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from trilha.errors import BadRequestError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from lingua import LanguageDetector

#: Languages detected: those with a stemmer and stopwords (:mod:`trilha.index.tokenize`) and zh.
DETECTED = ("pt", "en", "es", "fr", "de", "it", "nl", "zh")
#: Below this confidence in its best language a text is left undetected.
MIN_CONFIDENCE = 0.5
#: Among an index's few languages, the best must also be this many times as likely as the next
#: (two languages share the whole confidence, so 0.5 alone says nothing). Measured on 12,000
#: queries of seven evaluation sets in a pt and en index: the analysers chosen differ from an
#: eight-language detection's for 1.4% of the queries (1.9% with 0.5 alone).
SURE_ODDS = 3.0
#: A document detected in a language other than its collection's main one keeps that language
#: when this sure (whole sentences score 0.93-1.0; misread and bilingual texts 0.4-0.8)...
MINORITY_CONFIDENCE = 0.9
#: ... or, when at least :data:`LIKELY_CONFIDENCE` sure, when the main language is no likely
#: reading of it (under :data:`MAIN_PLAUSIBLE`): a short English note in a Portuguese collection
#: reads en 0.85, pt 0.00; an English page misread as Spanish reads es 0.67.
LIKELY_CONFIDENCE = 0.75
MAIN_PLAUSIBLE = 0.1
#: Characters looked at: enough for a sure answer, bounded for long documents.
SAMPLE_CHARS = 1000

_lock = threading.Lock()


@lru_cache(maxsize=16)
def _detector(among: tuple[str, ...]) -> LanguageDetector:
    """A detector choosing among the languages ``among`` (codes of :data:`DETECTED`). Loaded
    n-gram models are shared by every detector of the process: each language's are read once
    (~0.2-0.4 s of CPU each, on lingua's own threads, the GIL released)."""
    with _lock:
        from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

        languages = [
            Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in among
        ]
        return LanguageDetectorBuilder.from_languages(*languages).build()


def _among(langs: Iterable[str] | None) -> tuple[str, ...]:
    """The languages a detection chooses among: those of ``langs`` (an index's) when they are
    two or more and all detectable, else all of :data:`DETECTED`."""
    if langs is None:
        return DETECTED
    codes = tuple(sorted({primary_code(lang) for lang in langs}))
    return codes if len(codes) >= 2 and set(codes) <= set(DETECTED) else DETECTED


@lru_cache(maxsize=256)  # a query is detected by the lexical side and by the fusion table
def _readings(sample: str, among: tuple[str, ...] = DETECTED) -> tuple[tuple[str, float], ...]:
    """Each language of ``among`` with how sure lingua is of it, likeliest first."""
    if not any(c.isalpha() for c in sample):
        return ()
    values = _detector(among).compute_language_confidence_values(sample)
    return tuple((str(v.language.iso_code_639_1.name.lower()), float(v.value)) for v in values)


def detect_language(
    text: str, min_confidence: float = MIN_CONFIDENCE, among: Iterable[str] | None = None
) -> str | None:
    """The ISO 639-1 code of ``text``'s language, or None when no language is at least
    ``min_confidence`` sure (or the text has no letters). It is chosen among all of
    :data:`DETECTED`, or, given ``among`` (an index's languages, two or more of them), among
    those alone, where it must also be :data:`SURE_ODDS` times as likely as the next: which of
    the languages a query can be searched in it is written in. That reads the models of those
    languages only (a pt and en index: ~0.4 s on a first detection; all eight: ~2 s)."""
    chosen = _among(among)
    readings = _readings(text[:SAMPLE_CHARS], chosen)
    if not readings or readings[0][1] < min_confidence:
        return None
    if chosen != DETECTED and len(readings) > 1 and readings[0][1] < SURE_ODDS * readings[1][1]:
        return None
    return readings[0][0]


def document_language(text: str, main: str | None = None) -> str:
    """The language a document that declares none is indexed in. ``main`` is its collection's
    most frequent language (None: no collection yet): the detected language when it is
    ``main``'s, or another at least :data:`MINORITY_CONFIDENCE` sure, or at least
    :data:`LIKELY_CONFIDENCE` sure where ``main`` is no likely reading (under
    :data:`MAIN_PLAUSIBLE`); otherwise ``main``. With no ``main``,
    the detected language when :data:`MIN_CONFIDENCE` sure, else ``'en'``."""
    readings = _readings(text[:SAMPLE_CHARS])
    best = readings[0] if readings else None
    if main is None:
        return best[0] if best is not None and best[1] >= MIN_CONFIDENCE else "en"
    if best is None:
        return main
    own = primary_code(main)
    main_reading = next((value for code, value in readings if code == own), 0.0)
    unlike_main = best[1] >= LIKELY_CONFIDENCE and main_reading < MAIN_PLAUSIBLE
    if best[0] == own or best[1] >= MINORITY_CONFIDENCE or unlike_main:
        return best[0]
    return main


_CODE = re.compile(r"^[a-z]{2,3}([-_][A-Za-z0-9]{2,8})?$")
#: The two-letter codes of ISO 639-1 (three-letter codes are taken as given).
_ISO_639_1_CODES = """
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da
de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz
ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln
lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi
pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti
tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
"""
ISO_639_1 = frozenset(_ISO_639_1_CODES.split())
#: Three-letter (ISO 639-2) codes of the languages trilha detects, written as their two letters.
TWO_LETTERS = {
    "por": "pt", "eng": "en", "spa": "es", "fra": "fr", "fre": "fr", "deu": "de", "ger": "de",
    "ita": "it", "nld": "nl", "dut": "nl", "zho": "zh", "chi": "zh",
}  # fmt: skip


def language_code(value: str) -> str:
    """``value`` as a language code (``'pt'``, ``'pt-BR'``), or a one-line error saying what
    to give instead."""
    code = value.strip()
    primary = primary_code(code)
    if not _CODE.match(code) or (len(primary) == 2 and primary not in ISO_639_1):
        raise BadRequestError(
            f"language {value!r} is not a language code; give an ISO 639-1 code such as "
            f"{', '.join(DETECTED)} (optionally with a region, e.g. pt-BR)"
        )
    return code


def written_code(value: object) -> str:
    """A document's ``lang`` as stored, and a ``lang`` filter's value: checked as
    :func:`language_code`, then each subtag written as BCP 47 writes it (the language in lower
    case, a script in title case, a region in upper case: ``'PT'`` -> ``'pt'``, ``'pt_br'`` ->
    ``'pt-BR'``, ``'zh-hans'`` -> ``'zh-Hans'``; the three letters of a detected language as its
    two: ``'por'`` -> ``'pt'``), so that the same code is found however it was spelled. A
    subtag that is no script, region or variant (``pt-!!``, ``pt-``, ``pt--BR``) is refused as
    ``klingon`` is."""
    if not isinstance(value, str):
        raise BadRequestError(f"language {value!r} is not a language code; give one such as pt")
    primary, *rest = value.strip().replace("_", "-").split("-")
    try:
        primary = TWO_LETTERS.get(primary.lower(), primary.lower())
        subtags = [language_code(primary)]
    except BadRequestError:
        language_code(value)  # the same refusal, naming the whole value
        raise
    for tag in rest:
        written = _subtag(tag, len(subtags) == 1)
        if written is None:
            raise BadRequestError(
                f"language {value!r} is not a language code; give a language, optionally with a "
                "script and a region, such as pt, pt-BR or zh-Hans"
            )
        subtags.append(written)
    return "-".join(subtags)


def _subtag(tag: str, first: bool) -> str | None:
    """``tag`` as BCP 47 writes it, or None when it is no subtag."""
    if not tag.isascii() or not tag.isalnum():
        return None
    if first and len(tag) == 4 and tag.isalpha():  # a script: Hans, Latn
        return tag.title()
    if (len(tag) == 2 and tag.isalpha()) or (len(tag) == 3 and tag.isdigit()):  # BR, 419
        return tag.upper()
    if 5 <= len(tag) <= 8 or (len(tag) == 4 and tag[0].isdigit()):  # a variant: 1901
        return tag.lower()
    return None


def primary_code(lang: str | None) -> str:
    """The language without its region: ``'pt-BR'`` -> ``'pt'``; empty -> ``'en'``."""
    return (lang or "en").split("-")[0].split("_")[0].lower() or "en"
