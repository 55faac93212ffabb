"""What a profile walk looks for (:class:`ProfileQuery`), the words it reads statuses and
priorities by, and the accent folding it matches terms with.

Terms match case- and accent-insensitively: the text and the terms are lower-cased, then every
character of :data:`FOLD` is replaced by its base letter, in Python (:func:`fold`) and in Cypher
(:func:`trilha.graph.read.profile_statements.folded`) by the same table, so both sides agree.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Lower-case accented letters and their base letter (Portuguese, Spanish, French, German).
FOLD: tuple[tuple[str, str], ...] = tuple(
    (accented, base)
    for base, letters in (
        ("a", "áàâãäå"),
        ("e", "éèêë"),
        ("i", "íìîï"),
        ("o", "óòôõö"),
        ("u", "úùûü"),
        ("c", "ç"),
        ("n", "ñ"),
        ("y", "ýÿ"),
    )
    for accented in letters
)
_FOLD = str.maketrans(dict(FOLD))

#: Statuses that mean "late" whatever the due date.
LATE_STATUSES = ("late", "overdue", "atrasada", "atrasado", "atrasadas", "atrasados")
#: Statuses of finished work: never overdue, never open.
CLOSED_STATUSES = (
    "done",
    "closed",
    "cancelled",
    "canceled",
    "concluída",
    "concluida",
    "concluído",
    "concluido",
    "cancelada",
    "cancelado",
    "fechada",
    "fechado",
    "feito",
    "feita",
)
#: ``priority`` values that make an item a priority.
HIGH_PRIORITIES = ("high", "critical", "urgent", "alta", "crítica", "critica", "urgente")

MAX_TERMS = 50
MAX_TERM_CHARS = 300


def fold(text: str) -> str:
    """``text`` lower-cased with the accents of :data:`FOLD` removed."""
    return text.lower().translate(_FOLD)


def _words(values: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Stripped, non-empty, distinct; NUL refused; at most :data:`MAX_TERMS` of them."""
    out: dict[str, None] = {}
    for v in values:
        if "\x00" in v:
            raise ValueError(f"{what} must not contain NUL characters")
        if len(v) > MAX_TERM_CHARS:
            raise ValueError(f"{what} are at most {MAX_TERM_CHARS} characters each")
        if v.strip():
            out[v.strip()] = None
    if len(out) > MAX_TERMS:
        raise ValueError(f"at most {MAX_TERMS} {what}, got {len(out)}")
    return tuple(out)


class ProfileQuery(BaseModel):
    """Which anchors a profile walk keeps. Every filter left empty does not filter."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    today: date = Field(description="The day overdue, windows and validity are judged on.")
    now: datetime | None = Field(
        None, description="The instant ``expires_at`` is judged on (default: start of today, UTC)."
    )
    labels: tuple[str, ...] = Field(
        (), description="Anchor labels to start from, among the profile's; empty: all of them."
    )
    terms: tuple[str, ...] = Field(
        (), description="Keywords: an anchor's title, name or text contains any of them."
    )
    owner_ids: tuple[str, ...] = Field((), description="Keep anchors whose owner_id is one.")
    org_ids: tuple[str, ...] = Field(
        (), description="Keep anchors whose org_id is one (with owner_ids: either matches)."
    )
    statuses: tuple[str, ...] = Field((), description="Keep anchors with one of these statuses.")
    overdue: bool = Field(
        False, description="Keep late anchors: a late status, or due before today and not closed."
    )
    due_from: date | None = Field(
        None, description="Keep anchors dated (due_date, else updated_at) on or after this day."
    )
    due_to: date | None = Field(
        None, description="Keep anchors dated (due_date, else updated_at) on or before this day."
    )
    priority_only: bool = Field(
        False, description="Keep priority_node anchors and those of a high priority."
    )

    @field_validator("terms", "owner_ids", "org_ids", "statuses")
    @classmethod
    def _clean(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _words(value, "values")

    @property
    def instant(self) -> datetime:
        """:attr:`now`, else the start of :attr:`today` in UTC."""
        return self.now or datetime.combine(self.today, time(), tzinfo=UTC)


def iso_day(day: date) -> str:
    """``'YYYY-MM-DD'``."""
    return day.isoformat()


def iso_next_day(day: date) -> str:
    """The day after ``day``: an ISO date or timestamp is on or before ``day`` exactly when it
    sorts before this string."""
    return (day + timedelta(days=1)).isoformat()


def iso_instant(moment: datetime) -> str:
    """``moment`` in UTC as ``'YYYY-MM-DDTHH:MM:SS'`` (naive: taken as UTC), which sorts against
    stored ISO timestamps as time does."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment
    return utc.strftime("%Y-%m-%dT%H:%M:%S")
