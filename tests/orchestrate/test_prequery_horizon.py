"""Time horizons: named periods resolved against ``now``, explicit dates read from the text."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from pydantic import ValidationError

from trilha.orchestrate.prequery import HeuristicClassifier, TimeHorizon, resolve

NOW = datetime.fromisoformat("2025-06-11T09:30:00-03:00")  # a Wednesday
D = date.fromisoformat


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        ("today", "2025-06-11", "2025-06-11"),
        ("last_7d", "2025-06-04", "2025-06-11"),
        ("next_7d", "2025-06-11", "2025-06-18"),
        ("this_week", "2025-06-09", "2025-06-15"),
        ("last_30d", "2025-05-12", "2025-06-11"),
        ("next_30d", "2025-06-11", "2025-07-11"),
        ("this_month", "2025-06-01", "2025-06-30"),
    ],
)
def test_named_periods_resolve_against_now(name: str, start: str, end: str) -> None:
    got = resolve(name, NOW)
    assert (got.name, got.start, got.end) == (name, D(start), D(end))


def test_all_time_and_explicit_have_no_days_of_their_own() -> None:
    assert resolve("all_time", NOW) == TimeHorizon(name="all_time")
    assert resolve("explicit", NOW).name == "all_time"


@pytest.mark.parametrize(
    ("question", "name", "start", "end"),
    [
        ("Quais tarefas vencem nos próximos 7 dias?", "next_7d", "2025-06-11", "2025-06-18"),
        ("What happened last week?", "last_7d", "2025-06-04", "2025-06-11"),
        ("O que mudou no mês passado?", "last_30d", "2025-05-12", "2025-06-11"),
        ("What is due today?", "today", "2025-06-11", "2025-06-11"),
        ("O que aconteceu ontem?", "explicit", "2025-06-10", "2025-06-10"),
        ("Which tasks are due tomorrow?", "explicit", "2025-06-12", "2025-06-12"),
        ("Reunião de 2025-03-14", "explicit", "2025-03-14", "2025-03-14"),
        ("O que foi decidido em 03/04/2025?", "explicit", "2025-04-03", "2025-04-03"),
        ("What was decided on 03/04/2025?", "explicit", "2025-03-04", "2025-03-04"),
        ("What did the board decide on May 20?", "explicit", "2025-05-20", "2025-05-20"),
        ("O que saiu em 5 de março de 2024?", "explicit", "2024-03-05", "2024-03-05"),
        ("Receita do relatório de fevereiro", "explicit", "2025-02-01", "2025-02-28"),
        ("Quais os OKRs deste trimestre?", "explicit", "2025-04-01", "2025-06-30"),
        ("Goals for next quarter", "explicit", "2025-07-01", "2025-09-30"),
        ("Metas do primeiro trimestre de 2026", "explicit", "2026-01-01", "2026-03-31"),
        ("Which projects matter for our Q4 goals?", "explicit", "2025-10-01", "2025-12-31"),
        ("Objetivos para 2026", "explicit", "2026-01-01", "2026-12-31"),
        ("What did we ship last year?", "explicit", "2024-01-01", "2024-12-31"),
        ("Tickets closed in the last 14 days", "explicit", "2025-05-28", "2025-06-11"),
        ("Entregas das próximas 2 semanas", "explicit", "2025-06-11", "2025-06-25"),
    ],
)
def test_horizons_read_from_the_question(question: str, name: str, start: str, end: str) -> None:
    got = HeuristicClassifier().classify(question, now=NOW).time_horizon
    assert (got.name, got.start, got.end) == (name, D(start), D(end))


@pytest.mark.parametrize(
    "question",
    [
        "Is the support 24/7?",
        "O que você sugere que eu faça agora?",
        "Qual seria um bom próximo passo?",
        "May I expense a taxi?",
    ],
)
def test_no_period_is_all_time(question: str) -> None:
    assert HeuristicClassifier().classify(question, now=NOW).time_horizon.name == "all_time"


def test_the_first_period_in_the_text_wins() -> None:
    got = HeuristicClassifier().classify(
        "What should we do this week given last month's results?", now=NOW
    )
    assert got.time_horizon.name == "this_week"


def test_contains_is_inclusive_and_all_time_contains_everything() -> None:
    week = resolve("this_week", NOW)
    assert week.contains(D("2025-06-09")) and week.contains(D("2025-06-15"))
    assert not week.contains(D("2025-06-16"))
    assert TimeHorizon(name="all_time").contains(D("1900-01-01"))


def test_a_period_must_be_ordered_and_all_time_unbounded() -> None:
    with pytest.raises(ValidationError, match="after its end"):
        TimeHorizon(name="explicit", start=D("2025-02-01"), end=D("2025-01-01"))
    with pytest.raises(ValidationError, match="no start nor end"):
        TimeHorizon(name="all_time", start=D("2025-02-01"))
