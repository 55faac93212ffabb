"""Masking personal data before an answer is composed (seed 002's guardrails).

Brazilian identifiers and contact data are found by shape and, where the identifier has them,
by its check digits: CPF and CNPJ (mod 11), card numbers (Luhn). A *formatted* CPF, CNPJ or RG
(``123.456.789-09``, ``12.345.678/0001-95``, ``12.345.678-9``) is masked whatever its digits, as
its shape alone says what it is; a bare run of digits is masked only when its check digits hold,
so process numbers, statute numbers and years are left alone. E-mail addresses and phone numbers
with an area code (``(11) 98765-4321``, ``+55 11 3333-4444``) or a mobile number
(``98765-4321``) are masked too. Each is replaced by a label: ``[CPF]``, ``[CNPJ]``, ``[RG]``,
``[EMAIL]``, ``[TELEFONE]``, ``[CARTAO]``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

_EDGE_L = r"(?<![\w@.\-/])"
_EDGE_R = r"(?![\w@]|[.\-/]\w)"


def _digits(text: str) -> list[int]:
    return [int(c) for c in text if c.isdigit()]


def cpf_valid(text: str) -> bool:
    """True when the 11 digits of ``text`` have a CPF's check digits (and are not all equal)."""
    d = _digits(text)
    if len(d) != 11 or len(set(d)) == 1:
        return False
    for n in (9, 10):
        total = sum(v * w for v, w in zip(d[:n], range(n + 1, 1, -1), strict=True))
        if (total * 10) % 11 % 10 != d[n]:
            return False
    return True


def cnpj_valid(text: str) -> bool:
    """True when the 14 digits of ``text`` have a CNPJ's check digits (and are not all equal)."""
    d = _digits(text)
    if len(d) != 14 or len(set(d)) == 1:
        return False
    weights = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    for n, w in ((12, weights), (13, [6, *weights])):
        rest = sum(v * x for v, x in zip(d[:n], w, strict=True)) % 11
        if (0 if rest < 2 else 11 - rest) != d[n]:
            return False
    return True


def luhn_valid(text: str) -> bool:
    """True when the digits of ``text`` (13 to 19) pass the Luhn check of card numbers."""
    d = _digits(text)
    if not 13 <= len(d) <= 19:
        return False
    total = 0
    for i, v in enumerate(reversed(d)):
        if i % 2:
            v = v * 2 - 9 if v > 4 else v * 2
        total += v
    return total % 10 == 0


def _always(text: str) -> bool:
    return True


@dataclass(frozen=True)
class _Kind:
    label: str
    pattern: re.Pattern[str]
    valid: Callable[[str], bool]


def _kind(label: str, body: str, valid: Callable[[str], bool] = _always) -> _Kind:
    return _Kind(label, re.compile(_EDGE_L + body + _EDGE_R, re.IGNORECASE), valid)


#: Earlier kinds win where two matches overlap at the same start.
_KINDS = (
    _kind("[EMAIL]", r"[a-z0-9][a-z0-9._%+\-]*@[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.[a-z]{2,}"),
    _kind("[CNPJ]", r"\d{2}\.\d{3}\.\d{3}/\d{4}-\d{2}"),
    _kind("[CNPJ]", r"\d{14}", cnpj_valid),
    _kind("[CPF]", r"\d{3}\.\d{3}\.\d{3}-\d{2}"),
    _kind("[CPF]", r"\d{9}-?\d{2}", cpf_valid),
    _kind("[RG]", r"\d{1,2}\.\d{3}\.\d{3}-[\dx]"),
    _kind("[RG]", r"(?:(?<=\bRG:\s)|(?<=\bRG\s)|(?<=\bRG:))(?:n[º°o.]\s*)?[\d.\-]{5,12}[\dx]"),
    _kind("[CARTAO]", r"\d{13,19}", luhn_valid),
    _kind("[CARTAO]", r"\d{4}([ \-])\d{4}\1\d{4}\1\d{1,7}", luhn_valid),
    _kind("[CARTAO]", r"\d{4}[ \-]\d{6}[ \-]\d{5}", luhn_valid),
    _kind("[TELEFONE]", r"(?:\+55[\s\-]?)?\(\d{2}\)[\s\-]?9?\d{4}[\s\-]?\d{4}"),
    _kind("[TELEFONE]", r"\+55[\s\-]?\d{2}[\s\-]?9?\d{4}[\s\-]?\d{4}"),
    _kind("[TELEFONE]", r"\d{2}[\s\-]9\d{4}[\s\-]?\d{4}"),
    _kind("[TELEFONE]", r"9\d{4}-\d{4}"),
)


@dataclass(frozen=True)
class Masked:
    """A text with its personal data replaced, and how many of each kind were."""

    text: str
    counts: Counter[str]


def mask_pii(text: str) -> Masked:
    """``text`` with every CPF, CNPJ, RG, card number, e-mail address and phone number replaced
    by its label (see the module docstring)."""
    spans: list[tuple[int, int, str]] = []
    for kind in _KINDS:
        for found in kind.pattern.finditer(text):
            if kind.valid(found.group()):
                spans.append((found.start(), found.end(), kind.label))
    if not spans:
        return Masked(text, Counter())
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out, counts, at = [], Counter[str](), 0
    for start, end, label in spans:
        if start < at:  # overlaps one already masked
            continue
        out.append(text[at:start] + label)
        counts[label] += 1
        at = end
    out.append(text[at:])
    return Masked("".join(out), counts)
