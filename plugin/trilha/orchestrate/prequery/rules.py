"""The heuristic classifier's rules as data: ``rules.yaml`` in this package (or a file of the
same shape), validated and compiled once.

Patterns are regular expressions over the folded question (:func:`~trilha.orchestrate.prequery.
text.fold`), matched as whole words. The YAML's header says how intents are told apart.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trilha.config import INTENTS, Intent
from trilha.errors import ConfigurationError, one_line
from trilha.graph.model import NODE_SPECS
from trilha.orchestrate.prequery.model import HorizonName

Patterns = tuple[re.Pattern[str], ...]


def compile_patterns(patterns: Sequence[str], where: str) -> Patterns:
    """Each pattern matching whole words of a folded text; a bad one names ``where``."""
    out = []
    for p in patterns:
        try:
            out.append(re.compile(rf"(?<![\w/:-])(?:{p})(?![\w/:-])"))
        except re.error as e:
            raise ValueError(f"{where}: pattern {p!r} is not a regular expression ({e})") from e
    return tuple(out)


class _Rules(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class WeightedCues(_Rules):
    """Patterns that each add ``weight`` to their intent's score."""

    weight: float = Field(gt=0, description="What one matching pattern adds.")
    patterns: Patterns = Field(description="Compiled patterns.")

    @field_validator("patterns", mode="before")
    @classmethod
    def _compile(cls, value: Sequence[str]) -> Patterns:
        return compile_patterns(value, "intents")


class WorkRules(_Rules):
    """Patterns of the work hints."""

    overdue: Patterns = Field(description="Late items.")
    priority: Patterns = Field(description="Priorities, urgency.")
    statuses: dict[str, Patterns] = Field(description="Status name -> its patterns.")
    team: Patterns = Field(description="The team's or company's items (checked first).")
    mine: Patterns = Field(description="The caller's own items.")

    @field_validator("overdue", "priority", "team", "mine", mode="before")
    @classmethod
    def _compile(cls, value: Sequence[str]) -> Patterns:
        return compile_patterns(value, "work")

    @field_validator("statuses", mode="before")
    @classmethod
    def _compile_each(cls, value: dict[str, Sequence[str]]) -> dict[str, Patterns]:
        return {k: compile_patterns(v, f"work.statuses.{k}") for k, v in value.items()}


class Rules(_Rules):
    """Every table the heuristic classifier reads."""

    default_intent: Intent = Field(description="The intent of a question no pattern matches.")
    min_score: float = Field(2.0, ge=0, description="Least score that beats the default.")
    tie_order: tuple[Intent, ...] = Field(description="Who wins a tie, first first.")
    intents: dict[Intent, tuple[WeightedCues, ...]] = Field(description="Cues per intent.")
    labels: dict[str, Patterns] = Field(description="Graph label -> patterns naming it.")
    horizons: dict[HorizonName, Patterns] = Field(description="Named period -> its phrases.")
    work: WorkRules = Field(description="Work hints.")
    length: dict[str, Patterns] = Field(description="'long' and 'list' -> their patterns.")
    stopwords: dict[str, frozenset[str]] = Field(description="Language -> folded stopwords.")

    @field_validator("stopwords", mode="before")
    @classmethod
    def _split_words(cls, value: dict[str, str]) -> dict[str, frozenset[str]]:
        return {k: frozenset(str(v).split()) for k, v in value.items()}

    @field_validator("labels", "horizons", "length", mode="before")
    @classmethod
    def _compile_each(cls, value: dict[str, Sequence[str]]) -> dict[str, Patterns]:
        return {k: compile_patterns(v, k) for k, v in value.items()}

    @field_validator("labels")
    @classmethod
    def _known_labels(cls, value: dict[str, Patterns]) -> dict[str, Patterns]:
        unknown = sorted(set(value) - set(NODE_SPECS))
        if unknown:
            raise ValueError(f"are not graph labels: {', '.join(unknown)}")
        return value

    @field_validator("tie_order")
    @classmethod
    def _every_intent(cls, value: tuple[Intent, ...]) -> tuple[Intent, ...]:
        if sorted(value) != sorted(INTENTS):
            raise ValueError(f"must list every intent once: {', '.join(INTENTS)}")
        return value

    @property
    def all_stopwords(self) -> frozenset[str]:
        """Stopwords of every language."""
        return frozenset().union(*self.stopwords.values())


def load_rules(path: Path) -> Rules:
    """The rules of a YAML file; a bad file is one :class:`ConfigurationError` line."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Rules.model_validate(data)
    except (OSError, yaml.YAMLError) as e:
        raise ConfigurationError(f"{path}: cannot read the pre-query rules ({e})") from e
    except ValidationError as e:
        raise ConfigurationError(f"{path}: {one_line(e)}") from e


@functools.cache
def default_rules() -> Rules:
    """The rules shipped with trilha, loaded once."""
    with resources.as_file(resources.files(__package__) / "rules.yaml") as path:
        return load_rules(path)
