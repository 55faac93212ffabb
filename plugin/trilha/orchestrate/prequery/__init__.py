"""The Pre-query step (seed 004, REQ-RETR-002/003): what a question is about, before retrieval.

:func:`prequery` runs the offline :class:`HeuristicClassifier` (pt-BR and English), the
:class:`GroqClassifier` when one is given (falling back to the heuristic, in the trace), and a
:class:`EntityFinder` such as :class:`GraphEntityFinder` for the graph nodes it names.
"""

from trilha.orchestrate.prequery.entities import EntityFinder, GraphEntityFinder
from trilha.orchestrate.prequery.heuristic import HeuristicClassifier
from trilha.orchestrate.prequery.horizon import resolve
from trilha.orchestrate.prequery.llm import GroqClassifier
from trilha.orchestrate.prequery.model import (
    AnswerConstraints,
    FocusEntity,
    PreQuery,
    PreQueryOutcome,
    TimeHorizon,
    WorkHints,
)
from trilha.orchestrate.prequery.rules import Rules, default_rules, load_rules
from trilha.orchestrate.prequery.step import aprequery, prequery

__all__ = [
    "AnswerConstraints",
    "EntityFinder",
    "FocusEntity",
    "GraphEntityFinder",
    "GroqClassifier",
    "HeuristicClassifier",
    "PreQuery",
    "PreQueryOutcome",
    "Rules",
    "TimeHorizon",
    "WorkHints",
    "aprequery",
    "default_rules",
    "load_rules",
    "prequery",
    "resolve",
]
