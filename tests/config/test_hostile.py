"""Hostile YAML: each problem is ONE ConfigurationError line naming the file and the key."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trilha.config import (
    QueryProfile,
    load_agents,
    load_depth_plans,
    load_profiles,
    load_retrieval_config,
)
from trilha.errors import ConfigurationError

from .conftest import shipped

Change = Callable[[dict[str, Any]], object]


def _profile(name: str, key: str, value: Any) -> Change:
    return lambda d: d["profiles"][name].__setitem__(key, value)


PROFILE_CASES: list[tuple[Change, str]] = [
    (_profile("org_context", "colour", "red"), "profiles.org_context.colour: unknown key"),
    (
        _profile("org_context", "max_hops", "three"),
        "profiles.org_context.max_hops: must be an integer, not 'three'",
    ),
    (_profile("org_context", "max_hops", 0), "profiles.org_context.max_hops: must be ≥ 1"),
    (_profile("process_state", "max_hops", 9), "profiles.process_state.max_hops: must be ≤ 4"),
    (
        _profile("document_evidence", "anchors", ["Document", "Chunk"]),
        "profiles.document_evidence.anchors[0]: unknown node label 'Document'; "
        "the model calls it 'Doc'",
    ),
    (
        _profile("org_context", "allowed_rels", ["MEMBER_OF", "REPORTS_TO"]),
        "profiles.org_context.allowed_rels[1]: unknown relationship type 'REPORTS_TO'",
    ),
    (_profile("org_context", "anchors", []), "profiles.org_context.anchors: must have at least 1"),
    (_profile("org_context", "intent", "gossip"), "profiles.org_context.intent: must be one of"),
    (
        _profile("org_context", "require_validity", "perhaps"),
        "profiles.org_context.require_validity: must be true or false",
    ),
    (_profile("org_context", "name", "other"), "profiles.org_context.name: is 'other'"),
    (
        lambda d: d["intent_map"].__setitem__("factual", "evidence"),
        "intent_map.factual: no profile named 'evidence'",
    ),
    (
        lambda d: d["intent_map"].__setitem__("guessing", "org_context"),
        "intent_map.guessing: must be one of 'factual'",
    ),
    (lambda d: d.__setitem__("profiles", ["org_context"]), "profiles: must be a mapping of keys"),
]


def _one_line(load: Callable[[Path], object], path: Path) -> str:
    with pytest.raises(ConfigurationError) as caught:
        load(path)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{path}: ")
    return text.removeprefix(f"{path}: ")


@pytest.mark.parametrize(("change", "expected"), PROFILE_CASES)
def test_bad_query_profiles(write: Any, change: Change, expected: str) -> None:
    data = copy.deepcopy(shipped("profiles", "query_profiles.yaml"))
    change(data)
    assert _one_line(load_profiles, write("query_profiles.yaml", data)).startswith(expected)


def test_retired_profile_keys_are_one_warning_line_each(
    write: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A file still setting seed 004's require_rbac (on every profile, false on one) and
    default_profile loads without them, and says so once per key: never silently ignored, and
    ``require_rbac: false`` never widens what a walk may see (the profile has no such switch)."""
    old = copy.deepcopy(shipped("profiles", "query_profiles.yaml"))
    for name, body in old["profiles"].items():
        body["require_rbac"] = name != "process_state"
    old["default_profile"] = "org_context"
    path = write("query_profiles.yaml", old)
    with caplog.at_level(logging.WARNING, logger="trilha.config"):
        profiles = load_profiles(path)
    assert profiles == load_profiles()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and all("\n" not in line for line in lines)
    assert lines[0].startswith(f"{path}: default_profile is ignored") and "intent_map" in lines[0]
    every = ", ".join(sorted(old["profiles"]))  # false on one is named like true on the others
    assert lines[1].startswith(f"{path}: profiles {every}: require_rbac is ignored")
    assert lines[1].endswith("remove it")
    assert "require_rbac" not in QueryProfile.model_fields


def test_a_profile_built_with_require_rbac_warns(caplog: pytest.LogCaptureFixture) -> None:
    body = shipped("profiles", "query_profiles.yaml")["profiles"]["org_context"]
    with caplog.at_level(logging.WARNING, logger="trilha.config"):
        profile = QueryProfile.model_validate(
            {"name": "org_context", **body, "require_rbac": False}
        )
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("QueryProfile: require_rbac is ignored")
    assert profile == load_profiles().profiles["org_context"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "profiles: {org_context: [\n",
            "is not valid YAML (expected the node content, but found '<stream end>', line 2)",
        ),
        ("\x00binary", "is not valid YAML"),
        ("- just\n- a list\n", "must be a mapping of keys, but it is a list"),
        ("", "must be a mapping of keys, but it is empty"),
        ("just words", "must be a mapping of keys, but it is a str"),
    ],
)
def test_not_a_yaml_mapping(write: Any, text: str, expected: str) -> None:
    assert _one_line(load_profiles, write("query_profiles.yaml", text)).startswith(expected)


def test_missing_file(tmp_path: Path) -> None:
    assert "cannot be read" in _one_line(load_profiles, tmp_path / "nowhere.yaml")


DEPTH_CASES: list[tuple[Change, str]] = [
    (
        lambda d: d["levels"]["D1"].__setitem__("profile", "gossip"),
        "levels.D1.profile: no profile named 'gossip'",
    ),
    (lambda d: d["levels"].pop("D4"), "no plan for D4"),
    (lambda d: d["levels"].__setitem__("D9", d["levels"]["D0"]), "levels.D9: must be one of"),
    (
        lambda d: d["levels"]["D2"].__setitem__("sources", ["semantic", "rumours"]),
        "levels.D2.sources[1]: must be one of",
    ),
    (
        lambda d: d["levels"]["D0"].__setitem__("max_tokens", -5),
        "levels.D0.max_tokens: must be > 0",
    ),
]


@pytest.mark.parametrize(("change", "expected"), DEPTH_CASES)
def test_bad_depth_plans(write: Any, change: Change, expected: str) -> None:
    data = copy.deepcopy(shipped("profiles", "depth_plans.yaml"))
    change(data)
    assert expected in _one_line(load_depth_plans, write("depth_plans.yaml", data))


def test_depth_plans_check_against_the_given_profiles(write: Any) -> None:
    profiles = shipped("profiles", "query_profiles.yaml")
    del profiles["profiles"]["document_evidence"]
    profiles["intent_map"]["factual"] = "org_context"
    loaded = load_profiles(write("query_profiles.yaml", profiles))
    path = write("depth_plans.yaml", shipped("profiles", "depth_plans.yaml"))
    with pytest.raises(ConfigurationError, match=r"levels\.D2\.profile: no profile named"):
        load_depth_plans(path, profiles=loaded)


RETRIEVAL_CASES: list[tuple[Change, str]] = [
    (
        lambda d: d.__setitem__("default_strategy_factual", "magic"),
        "default_strategy_factual: must",
    ),
    (lambda d: d.pop("default_strategy_strategic"), "default_strategy_strategic: required key"),
    (
        lambda d: d["orchestrator"].__setitem__("work_strategy", "sum"),
        "orchestrator.work_strategy: must be one of",
    ),
    (lambda d: d["orchestrator"].__setitem__("fudge", 1), "orchestrator.fudge: unknown key"),
    (
        lambda d: d["orchestrator"].__setitem__("graph_limit", -1),
        "orchestrator.graph_limit: must be",
    ),
    (lambda d: d.__setitem__("scope", "user"), "scope: must be 'global'"),
]


@pytest.mark.parametrize(("change", "expected"), RETRIEVAL_CASES)
def test_bad_retrieval_config(write: Any, change: Change, expected: str) -> None:
    data = copy.deepcopy(shipped("profiles", "retrieval_config.yaml"))
    change(data)
    assert expected in _one_line(load_retrieval_config, write("retrieval_config.yaml", data))


def test_bad_agents(write: Any, tmp_path: Path) -> None:
    agent = shipped("agents", "task.yaml")
    bad = write("task.yaml", {**agent, "tools": ["trilha_search", "shell"]})
    assert _one_line(load_agents, bad).startswith("tools[1]: must be one of 'trilha_search'")
    bad = write("task.yaml", {**agent, "default_intent": "chat"})
    assert _one_line(load_agents, bad).startswith("default_intent: must be one of")
    write("task.yaml", agent)
    twin = write("twin.yaml", agent)
    with pytest.raises(ConfigurationError) as caught:
        load_agents(tmp_path)
    assert str(caught.value) == f"{twin}: name: agent 'task_agent' is defined twice"
