"""Portuguese text and words prepared for the Snowball stemmer: numbers, citations, -ão plurals.

The rules are data (``portuguese.yaml`` in this package); the steps are:

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
"""

from __future__ import annotations

import functools
import re
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trilha.errors import ConfigurationError, one_line

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
