"""The recent context of a conversation under a token budget (seed 004 REQ-RETR-018).

:func:`pack` is pure: given the candidate turns of the current conversation and of the user's
earlier conversations, both newest first, it keeps what fits in ``max_tokens``. The current
conversation goes first; within each list turns are taken newest first, and a turn that does not
fit in what is left is dropped while older, shorter ones may still be kept (a long pasted turn
does not hide the rest of the conversation). Each turn costs the tokens of its text
(:func:`trilha.tokens.count_tokens`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from trilha.memory.turns import Turn
from trilha.tokens import count_tokens


class RecentContext(BaseModel):
    """What :meth:`MemoryStore.get_recent_context` returns: the turns kept, by memory class."""

    model_config = ConfigDict(frozen=True)

    working_set: tuple[Turn, ...] = Field(
        (), description="Turns of the current conversation, newest first."
    )
    episodic: tuple[Turn, ...] = Field(
        (),
        description="The same user's earlier turns in other conversations (of the project, "
        "when one was given), newest first.",
    )
    tokens: int = Field(0, ge=0, description="Tokens of the kept turns' texts; <= max_tokens.")
    dropped: int = Field(0, ge=0, description="Candidate turns left out for the budget.")


def _fill(
    candidates: Sequence[Turn], room: int, cost: Callable[[str], int]
) -> tuple[list[Turn], int]:
    """The candidates that fit in ``room``, in order, each taken if it fits; and the room left."""
    kept: list[Turn] = []
    for turn in candidates:
        tokens = cost(turn.text)
        if tokens <= room:
            kept.append(turn)
            room -= tokens
    return kept, room


def pack(
    working: Sequence[Turn],
    episodic: Sequence[Turn],
    max_tokens: int,
    cost: Callable[[str], int] = count_tokens,
) -> RecentContext:
    """The :class:`RecentContext` of ``working`` then ``episodic`` within ``max_tokens``."""
    budget = max(0, max_tokens)
    kept_working, room = _fill(working, budget, cost)
    kept_episodic, room = _fill(episodic, room, cost)
    kept = len(kept_working) + len(kept_episodic)
    return RecentContext(
        working_set=tuple(kept_working),
        episodic=tuple(kept_episodic),
        tokens=budget - room,
        dropped=len(working) + len(episodic) - kept,
    )
