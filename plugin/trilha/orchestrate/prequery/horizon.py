"""The time horizon of a question: found in its folded text, resolved against ``now``.

Named periods (``last_7d``, ``this_week``...) are found by the phrase tables of the rules
(:mod:`trilha.orchestrate.prequery.rules`); dates, months, quarters, years, ``ontem``/
``yesterday``, ``amanhã``/``tomorrow`` and "last/next N days" are read here and become an
``explicit`` period. When a question names several, the first one in the text wins. The
arithmetic is pure: the same ``now`` always gives the same days (REQ-RETR-002; an LLM may name
a period, code resolves it).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date, datetime, timedelta

from trilha.orchestrate.prequery.model import ALL_TIME, HorizonName, TimeHorizon

_PT_MONTHS = ("janeiro", "fevereiro", "marco", "abril", "maio", "junho", "julho", "agosto",
              "setembro", "outubro", "novembro", "dezembro")  # fmt: skip
_EN_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
              "september", "october", "november", "december")  # fmt: skip
#: Folded month names, pt-BR and English, to their number.
MONTHS = {m: i % 12 + 1 for i, m in enumerate(_PT_MONTHS + _EN_MONTHS)}
_ORDINALS = {"primeiro": 1, "segundo": 2, "terceiro": 3, "quarto": 4,
             "first": 1, "second": 2, "third": 3, "fourth": 4}  # fmt: skip
_MONTH = "(" + "|".join(MONTHS) + ")"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|o)?"
_BEFORE = r"(?<![\w/:-])"
_AFTER = r"(?![\w/:-])"

Match = re.Match[str]
Reader = Callable[[Match, date, str], tuple[date, date] | None]


def resolve(name: HorizonName, now: datetime) -> TimeHorizon:
    """The days of the named period ``name`` around ``now``'s day (``explicit`` has no days
    of its own: it reads as ``all_time``). ``last_7d`` is the 7 days before today and today;
    ``next_7d`` today and the 7 days after; ``this_week`` Monday to Sunday."""
    today = now.date()
    spans: dict[str, tuple[date, date]] = {
        "today": (today, today),
        "last_7d": (today - timedelta(days=7), today),
        "next_7d": (today, today + timedelta(days=7)),
        "this_week": (today - timedelta(days=today.weekday()),
                      today + timedelta(days=6 - today.weekday())),
        "last_30d": (today - timedelta(days=30), today),
        "next_30d": (today, today + timedelta(days=30)),
        "this_month": _month(today.year, today.month),
    }  # fmt: skip
    if name not in spans:
        return ALL_TIME
    start, end = spans[name]
    return TimeHorizon(name=name, start=start, end=end)


def detect(
    folded: str, now: datetime, lang: str, named: Mapping[HorizonName, Sequence[re.Pattern[str]]]
) -> TimeHorizon:
    """The first period named in ``folded`` (a :func:`~trilha.orchestrate.prequery.text.fold`
    text), resolved against ``now``; ``all_time`` when it names none. ``lang`` decides how
    ``03/04`` reads (day first in 'pt', month first in 'en')."""
    today = now.date()
    found: list[tuple[int, TimeHorizon]] = []
    for name, patterns in named.items():
        for pattern in patterns:
            hit = pattern.search(folded)
            if hit:
                found.append((hit.start(), resolve(name, now)))
    for hit, span in _explicit(folded, today, lang):
        found.append((hit.start(), TimeHorizon(name="explicit", start=span[0], end=span[1])))
    return min(found, key=lambda f: f[0])[1] if found else ALL_TIME


def _explicit(folded: str, today: date, lang: str) -> Iterator[tuple[Match, tuple[date, date]]]:
    """Every explicit period in ``folded`` with the match that names it."""
    for pattern, read in _READERS:
        for hit in pattern.finditer(folded):
            span = read(hit, today, lang)
            if span is not None:
                yield hit, span


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _quarter(year: int, q: int) -> tuple[date, date]:
    return date(year, 3 * q - 2, 1), _month(year, 3 * q)[1]


def _day(year: int, month: int, day: int) -> tuple[date, date] | None:
    try:
        d = date(year, month, day)
    except ValueError:
        return None
    return d, d


def _year_of(text: str | None, today: date) -> int:
    return int(text) if text else today.year


def _iso(m: Match, today: date, lang: str) -> tuple[date, date] | None:
    return _day(int(m[1]), int(m[2]), int(m[3]))


def _numeric(m: Match, today: date, lang: str) -> tuple[date, date] | None:
    if m[0] == "24/7":  # round the clock, not the 24th of July
        return None
    a, b = int(m[1]), int(m[2])
    year = int(m[3]) + (2000 if len(m[3] or "") == 2 else 0) if m[3] else today.year
    day, month = (b, a) if lang == "en" else (a, b)
    return _day(year, month, day)


def _day_month(m: Match, today: date, lang: str) -> tuple[date, date] | None:
    return _day(_year_of(m[3], today), MONTHS[m[2]], int(m[1]))


def _month_day(m: Match, today: date, lang: str) -> tuple[date, date] | None:
    return _day(_year_of(m[3], today), MONTHS[m[1]], int(m[2]))


def _month_only(m: Match, today: date, lang: str) -> tuple[date, date] | None:
    return _month(_year_of(m[2], today), MONTHS[m[1]])


def _quarter_number(m: Match, today: date, lang: str) -> tuple[date, date]:
    q = int(m[1]) if m[1] else _ORDINALS[m[2]]
    return _quarter(_year_of(m[3], today), q)


def _relative_quarter(m: Match, today: date, lang: str) -> tuple[date, date]:
    shift = {"this": 0, "next": 1, "last": -1}[_which(m[0])]
    index = today.year * 4 + (today.month - 1) // 3 + shift
    return _quarter(index // 4, index % 4 + 1)


def _relative_year(m: Match, today: date, lang: str) -> tuple[date, date]:
    year = today.year + {"this": 0, "next": 1, "last": -1}[_which(m[0])]
    return date(year, 1, 1), date(year, 12, 31)


def _year(m: Match, today: date, lang: str) -> tuple[date, date]:
    return date(int(m[1]), 1, 1), date(int(m[1]), 12, 31)


def _relative_day(m: Match, today: date, lang: str) -> tuple[date, date]:
    d = today + timedelta(days=_RELATIVE_DAYS[m[0].strip()])
    return d, d


def _n_units(m: Match, today: date, lang: str) -> tuple[date, date] | None:
    n = int(m[2]) * (7 if m[3].startswith(("seman", "week")) else 1)
    if _which(m[1]) == "next":
        return today, today + timedelta(days=n)
    return today - timedelta(days=n), today


def _which(text: str) -> str:
    if re.search(r"proxim|next|que vem|coming", text):
        return "next"
    if re.search(r"passad|anterior|last|previous|ultim|past", text):
        return "last"
    return "this"


_RELATIVE_DAYS = {"ontem": -1, "yesterday": -1, "anteontem": -2, "amanha": 1, "tomorrow": 1}
_THIS = r"(?:este|esse|neste|nesse|deste|desse|this|current)"
_NEXT_LAST = r"(?:proximo|next|passado|anterior|last|previous|ultimo)"

_READERS: tuple[tuple[re.Pattern[str], Reader], ...] = tuple(
    (re.compile(_BEFORE + pattern + _AFTER), read)
    for pattern, read in (
        (r"(\d{4})-(\d{1,2})-(\d{1,2})", _iso),
        (r"(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?", _numeric),
        (_DAY + rf" (?:de )?{_MONTH}(?:,? (?:de )?{_YEAR})?", _day_month),
        (rf"{_MONTH} {_DAY}(?:,? {_YEAR})?", _month_day),
        (rf"(?:em|de|no mes de|in|during|since|until|for|of) {_MONTH}(?: (?:de )?{_YEAR})?",
         _month_only),
        (rf"(?:q([1-4])|(primeiro|segundo|terceiro|quarto|first|second|third|fourth) "
         rf"(?:trimestre|quarter))(?: (?:de |of )?{_YEAR})?", _quarter_number),
        (rf"(?:{_THIS} (?:trimestre|quarter)|(?:trimestre|quarter) (?:que vem|passado|anterior)"
         rf"|{_NEXT_LAST} (?:trimestre|quarter))", _relative_quarter),
        (rf"(?:{_THIS} ano|ano (?:que vem|passado)|{_NEXT_LAST} ano|(?:this|next|last) year)",
         _relative_year),
        (rf"(?:em|de|para|no ano de|in|for|during|of) {_YEAR}", _year),
        ("|".join(_RELATIVE_DAYS), _relative_day),
        (r"(ultim[oa]s|proxim[oa]s|last|past|next|coming) (\d{1,3}) (dias|semanas|days|weeks)",
         _n_units),
    )
)  # fmt: skip
