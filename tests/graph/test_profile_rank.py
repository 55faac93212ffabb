"""The profile walk's score, reasons, folding and query checks: pure functions, hand-computed."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from trilha.access import Principal
from trilha.graph.read.profile_query import ProfileQuery, fold, iso_instant, iso_next_day
from trilha.graph.read.profile_walk import (
    ProfileLink,
    connection,
    is_overdue,
    is_priority,
    reason,
    recency,
    score,
    term_overlap,
)

TODAY = date(2026, 2, 1)
ANA = Principal(user_id="u-ana", org_ids=["acme"])


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"status": "late"}, True),
        ({"status": "Atrasada", "due_date": "2026-05-01"}, True),
        ({"status": "open", "due_date": "2026-01-31"}, True),
        ({"status": "open", "due_date": "2026-02-01"}, False),  # due today is not late
        ({"status": "concluída", "due_date": "2026-01-01"}, False),
        ({"status": "DONE", "due_date": "2026-01-01"}, False),
        ({"due_date": "2026-01-01T09:00:00Z"}, True),
        ({}, False),
    ],
)
def test_overdue(props: dict[str, Any], expected: bool) -> None:
    assert is_overdue(props, TODAY) is expected


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"priority_node": True}, True),
        ({"priority": "Alta"}, True),
        ({"priority": "critical"}, True),
        ({"priority": "low"}, False),
        ({"priority_node": False, "priority": 3}, False),
        ({"priority_node": "true"}, False),  # a string is not a flag
    ],
)
def test_priority(props: dict[str, Any], expected: bool) -> None:
    assert is_priority(props) is expected


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"updated_at": "2026-02-01T08:00:00Z"}, 1.0),
        ({"updated_at": "2026-01-02"}, 0.5),  # 30 days
        ({"created_at": "2025-12-03"}, 1 / 3),  # 60 days
        ({"updated_at": "2026-03-01"}, 1.0),  # the future counts as today
        ({"updated_at": "yesterday"}, 0.0),
        ({}, 0.0),
    ],
)
def test_recency(props: dict[str, Any], expected: float) -> None:
    assert recency(props, TODAY, 30.0) == pytest.approx(expected)


def test_term_overlap_folds_accents_and_case() -> None:
    props = {"title": "Relatório de IMPACTO", "text": "sobre a LGPD"}
    assert term_overlap(props, [fold("relatorio"), fold("lgpd")]) == 1.0
    assert term_overlap(props, ["impacto", "crm", "zzz", "lgpd"]) == 0.5
    assert term_overlap(props, []) == 0.0


def test_connection() -> None:
    assert connection({"owner_id": "u-ana", "org_id": "beta"}, ANA) == 1.0
    assert connection({"owner_id": "u-bob", "org_id": "acme"}, ANA) == 0.5
    assert connection({"org_id": "beta"}, ANA) == 0.0
    assert connection({"owner_id": "u-ana"}, None) == 0.0


def test_score_adds_its_terms() -> None:
    props = {
        "title": "LGPD report",
        "status": "late",
        "priority": "high",
        "updated_at": "2026-01-02",
        "owner_id": "u-ana",
    }
    # 1 + terms 1 × ½ + overdue ½ + priority ½ + recency ¼ × ½ + connected ½ × 1
    assert score(props, ["lgpd", "crm"], TODAY, ANA) == pytest.approx(
        1 + 0.5 + 0.5 + 0.5 + 0.125 + 0.5
    )
    assert score({}, [], TODAY, None) == 1.0


def _link(rel: str, direction: str, other: str, hops: int = 1) -> ProfileLink:
    return ProfileLink.model_validate(
        {
            "rel_type": rel,
            "direction": direction,
            "other_id": other,
            "other_label": other.split(":")[0],
            "hops": hops,
        }
    )


def test_reason() -> None:
    links = [
        _link("ASSIGNED_TO", "out", "User:u"),
        _link("BELONGS_TO", "out", "Project:p"),
        _link("BELONGS_TO", "out", "Org:o", 2),
    ]
    assert reason("Task", {"status": "late", "priority_node": True}, links, TODAY) == (
        "late priority Task of Project:p"
    )
    aligned = [_link("ALIGNS_WITH", "in", "Task:a"), _link("ALIGNS_WITH", "in", "Task:b")]
    assert reason("OKR", {}, aligned, TODAY) == "OKR with 2 aligned items"
    assert reason("OKR", {}, [_link("BELONGS_TO", "in", "Task:a")], TODAY) == "OKR"


def test_iso_bounds() -> None:
    assert iso_next_day(date(2026, 2, 28)) == "2026-03-01"
    assert iso_next_day(date(2026, 2, 28)) > "2026-02-28T23:59:59Z"
    moment = datetime(2026, 2, 1, 1, 30, tzinfo=timezone(timedelta(hours=3)))
    assert iso_instant(moment) == "2026-01-31T22:30:00"
    assert ProfileQuery(today=TODAY).instant == datetime(2026, 2, 1, tzinfo=UTC)


def test_query_cleans_terms_and_refuses_nul() -> None:
    query = ProfileQuery(today=TODAY, terms=(" lgpd ", "", "lgpd", "crm"))
    assert query.terms == ("lgpd", "crm")
    with pytest.raises(ValidationError, match="NUL"):
        ProfileQuery(today=TODAY, terms=("a\x00b",))
    with pytest.raises(ValidationError, match="at most 50"):
        ProfileQuery(today=TODAY, terms=tuple(f"t{i}" for i in range(51)))
