"""The retrieval plan: depth, sources, profile, strategy and budget from config, intent and
request (seed 004's D0–D4 table and profile map)."""

from __future__ import annotations

from datetime import date

import pytest

from trilha.config import load_depth_plans, load_profiles, load_retrieval_config
from trilha.orchestrate.plan import plan_retrieval
from trilha.orchestrate.prequery.model import AnswerConstraints, PreQuery, TimeHorizon, WorkHints
from trilha.orchestrate.request import RetrievalRequest

PROFILES = load_profiles()
DEPTHS = load_depth_plans(profiles=PROFILES)
CONFIG = load_retrieval_config()


def _pre(intent: str, overdue: bool = False) -> PreQuery:
    return PreQuery.model_validate(
        {
            "retrieval_intent": intent,
            "focus_entities": (),
            "time_horizon": TimeHorizon(name="all_time", start=None, end=None),
            "answer_constraints": AnswerConstraints(length="short", language="pt"),
            "work": WorkHints(overdue=overdue, statuses=(), ownership="any", priority=False),
            "keywords": (),
            "classifier": "heuristic",
            "confidence": 1.0,
        }
    )


def _plan(intent: str, **fields: object):  # type: ignore[no-untyped-def]
    request = RetrievalRequest.make(user_id="u", conversation_id="c", raw_query="q", **fields)
    return plan_retrieval(request, _pre(intent), config=CONFIG, profiles=PROFILES, depths=DEPTHS)


def test_the_intent_picks_depth_profile_and_strategy_from_config() -> None:
    plan = _plan("procedural")
    assert plan.depth == CONFIG.orchestrator.depth_by_intent["procedural"] == "D2"
    assert plan.profile is not None and plan.profile.name == "process_state"
    assert plan.strategy == CONFIG.default_strategy_procedural
    assert plan.max_tokens == DEPTHS.plan("D2").max_tokens == 3000
    assert plan.searches_documents and plan.walks_graph and not plan.reads_claims


def test_d0_reads_the_working_set_only_and_walks_nothing() -> None:
    plan = _plan("factual", depth="D0")
    assert plan.sources == {"working_set"} and plan.profile is None
    assert plan.reads_conversation and not plan.reads_episodic
    assert not plan.searches_documents and not plan.walks_graph
    assert plan.max_tokens == 500


def test_d3_adds_claims_and_d4_resets_to_the_strategy_anchor() -> None:
    assert _plan("factual", depth="D3").reads_claims
    d4 = _plan("procedural", depth="D4")
    assert d4.profile is not None and d4.profile.name == "strategy_alignment"
    assert not d4.reads_conversation and d4.walks_graph and not d4.searches_documents


def test_an_intent_the_map_does_not_name_takes_the_depth_plans_profile() -> None:
    plan = _plan("graph_insight", depth="D2")
    assert plan.profile is not None and plan.profile.name == DEPTHS.plan("D2").profile


def test_overrides_win_but_the_budget_never_passes_the_ceiling() -> None:
    plan = _plan("factual", strategy="keyword_only", max_tokens=100)
    assert plan.strategy == "keyword_only" and plan.max_tokens == 100
    assert _plan("factual", max_tokens=150_000).max_tokens == CONFIG.max_tokens_context
    assert not _plan("procedural", strategy="graph_only").searches_documents


def test_max_hops_is_capped_by_max_depth() -> None:
    plan = _plan("procedural")
    assert plan.profile is not None
    assert plan.profile.max_hops == min(
        PROFILES.profiles["process_state"].max_hops, CONFIG.max_depth
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"raw_query": "   "}, "raw_query is empty"),
        ({"depth": "D9"}, "depth"),
        ({"strategy": "magic"}, "strategy"),
        ({"user_id": "a\x00b"}, "user_id"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"roles": ["board"]}, "roles"),
    ],
)
def test_a_bad_request_is_one_clear_line(fields: dict[str, object], message: str) -> None:
    from trilha.errors import BadRequestError

    base = {"user_id": "u", "conversation_id": "c", "raw_query": "q"}
    with pytest.raises(BadRequestError, match=message) as caught:
        RetrievalRequest.make(**{**base, **fields})
    assert "\n" not in str(caught.value)


def test_horizon_is_a_date_range() -> None:
    horizon = TimeHorizon(name="last_7d", start=date(2026, 11, 17), end=date(2026, 11, 24))
    assert horizon.contains(date(2026, 11, 20)) and not horizon.contains(date(2026, 11, 1))


def test_a_question_about_the_state_of_work_goes_to_the_work_strategy() -> None:
    request = RetrievalRequest.make(user_id="u", conversation_id="c", raw_query="q")
    plan = plan_retrieval(
        request, _pre("procedural", overdue=True), config=CONFIG, profiles=PROFILES, depths=DEPTHS
    )
    assert plan.strategy == CONFIG.orchestrator.work_strategy == "graph_only"
    assert plan.walks_graph and not plan.searches_documents
