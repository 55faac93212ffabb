"""Cited answers (seed 002, F12) through UC09 (seed 000): :func:`ask` / :func:`aask` run
ParseQuery → HybridRetrieve → RerankResults → BuildAnswer as a LlamaIndex Workflow
(:class:`UC09Workflow`) and return an :class:`Answer` whose every sentence cites a unit."""

from trilha.answer.ask import aask, ask, ask_request
from trilha.answer.pii import mask_pii
from trilha.answer.types import Answer, AnswerCitation, AskParams, AskRequest, NoAnswer
from trilha.answer.workflow import UC09Workflow

__all__ = [
    "Answer",
    "AnswerCitation",
    "AskParams",
    "AskRequest",
    "NoAnswer",
    "UC09Workflow",
    "aask",
    "ask",
    "ask_request",
    "mask_pii",
]
