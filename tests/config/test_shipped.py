"""Every YAML shipped in trilha.profiles and trilha.agents loads and agrees with the graph model."""

from __future__ import annotations

import json

from trilha.config import (
    DEPTH_LEVELS,
    INTENTS,
    load_agents,
    load_depth_plans,
    load_profiles,
    load_retrieval_config,
)
from trilha.config.models import SEED_LABELS
from trilha.graph.build.records import loads_records
from trilha.graph.model import EDGE_SPECS, NODE_SPECS

from .conftest import ROOT

SEED_004_ENTITIES = [
    "User",
    "Organization",
    "Department",
    "Project",
    "Task",
    "Document",
    "Chunk",
    "OKR",
    "StrategicObjective",
    "Purpose",
    "Process",
    "DecisionPoint",
    "Claim",
    "Memory",
    "DocSummary",
]


def test_the_package_data_is_the_repository_yaml() -> None:
    assert load_profiles() == load_profiles(ROOT / "profiles" / "query_profiles.yaml")
    assert load_depth_plans() == load_depth_plans(ROOT / "profiles" / "depth_plans.yaml")
    assert load_retrieval_config() == load_retrieval_config(
        ROOT / "profiles" / "retrieval_config.yaml"
    )
    assert load_agents() == load_agents(ROOT / "agents")


def test_profiles_follow_seed_004() -> None:
    profiles = load_profiles()
    assert set(profiles.profiles) == {
        "org_context",
        "document_evidence",
        "process_state",
        "strategy_alignment",
    }
    assert {p: profiles.profiles[p].max_hops for p in profiles.profiles} == {
        "org_context": 3,
        "document_evidence": 2,
        "process_state": 4,
        "strategy_alignment": 3,
    }
    assert profiles.profiles["document_evidence"].anchors == ("Doc", "Chunk", "DocSummary")
    depths = load_depth_plans()
    named = profiles.profile_for("orientation", depths.plan("D2"))
    assert named is not None and named.name == "strategy_alignment"
    unnamed = profiles.profile_for("graph_insight", depths.plan("D2"))  # the depth plan's
    assert unnamed is not None and unnamed.name == "document_evidence"
    d4 = profiles.profile_for("factual", depths.plan("D4"))  # a new anchor: the depth plan's
    assert d4 is not None and d4.name == "strategy_alignment"
    assert profiles.profile_for("factual", depths.plan("D0")) is None
    for profile in profiles.profiles.values():
        assert set(profile.anchors) <= set(NODE_SPECS)
        assert set(profile.allowed_rels) <= set(EDGE_SPECS)


def test_every_allowed_rel_touches_a_label_of_its_walk() -> None:
    """Each relationship a profile allows connects labels the model has, one of them an anchor
    or reachable from one through the profile's other relationships."""
    for profile in load_profiles().profiles.values():
        reach = set(profile.anchors)
        for _ in range(profile.max_hops):
            for rel in profile.allowed_rels:
                spec = EDGE_SPECS[rel]
                if reach & spec.sources or reach & spec.targets:
                    reach |= spec.sources | spec.targets
        for rel in profile.allowed_rels:
            spec = EDGE_SPECS[rel]
            assert reach & (spec.sources | spec.targets), (profile.name, rel)


def test_the_model_covers_the_seed_004_entities() -> None:
    for entity in SEED_004_ENTITIES:
        assert SEED_LABELS.get(entity, entity) in NODE_SPECS, entity


def test_depth_plans_cover_every_level() -> None:
    plans = load_depth_plans()
    assert tuple(plans.levels) == DEPTH_LEVELS
    assert plans.plan("D0").profile is None and plans.plan("D0").max_tokens == 500
    assert plans.plan("D3").sources[-1] == "claims"
    assert plans.plan("D4").profile == "strategy_alignment"


def test_retrieval_config_has_a_strategy_for_every_intent() -> None:
    config = load_retrieval_config()
    assert config.scope == "global" and config.max_results == 40
    assert {i: config.strategy_for(i) for i in INTENTS}["graph_insight"] == "graph_only"
    assert all(config.strategy_for(i) for i in INTENTS)


def test_agents() -> None:
    agents = load_agents()
    assert set(agents) == {"knowledge_agent", "task_agent", "user_agent"}
    assert agents["task_agent"].default_intent == "procedural"
    assert "trilha_graph_path" in agents["task_agent"].tools


def test_graph_records_can_hold_what_the_profiles_walk() -> None:
    """Seed 004's organisation, process and strategy graph passes the model's record checks."""
    nodes = [
        ("Org", "acme"),
        ("Department", "legal"),
        ("User", "ana"),
        ("Process", "onboarding"),
        ("DecisionPoint", "approve"),
        ("Task", "t1"),
        ("Purpose", "p"),
        ("StrategicObjective", "so"),
        ("OKR", "okr1"),
        ("Doc", "d1"),
        ("DocSummary", "d1-sum"),
        ("Claim", "c1"),
        ("Memory", "m1"),
        ("Entity", "lgpd"),
    ]
    edges = [
        ("MEMBER_OF", "User:ana", "Department:legal"),
        ("BELONGS_TO", "Department:legal", "Org:acme"),
        ("BELONGS_TO", "Task:t1", "Process:onboarding"),
        ("BELONGS_TO", "DecisionPoint:approve", "Process:onboarding"),
        ("ASSIGNED_TO", "DecisionPoint:approve", "User:ana"),
        ("DEPENDS_ON", "DecisionPoint:approve", "Task:t1"),
        ("ALIGNS_WITH", "OKR:okr1", "StrategicObjective:so"),
        ("ALIGNS_WITH", "StrategicObjective:so", "Purpose:p"),
        ("BELONGS_TO", "OKR:okr1", "Department:legal"),
        ("HAS_SUMMARY", "Doc:d1", "DocSummary:d1-sum"),
        ("MENTIONS", "Claim:c1", "Entity:lgpd"),
        ("OWNS", "User:ana", "Memory:m1"),
    ]
    lines = [json.dumps({"kind": "node", "label": label, "id": i}) for label, i in nodes]
    lines += [
        json.dumps({"kind": "edge", "type": t, "source": s, "target": o}) for t, s, o in edges
    ]
    records = loads_records("\n".join(lines))
    assert len(records) == len(nodes) + len(edges)
