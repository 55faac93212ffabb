"""merge_configs: global, then org, then user, key by key (orchestrator: too); unknown keys
refused; a retired search: block is ignored with one warning line."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from trilha.config import RetrievalConfig, load_retrieval_config, merge_configs
from trilha.errors import ConfigurationError

from .conftest import shipped


@pytest.fixture
def global_() -> RetrievalConfig:
    return RetrievalConfig.model_validate(shipped("profiles", "retrieval_config.yaml"))


def test_later_scopes_win_key_by_key(global_: RetrievalConfig) -> None:
    org = {
        "id": "acme",
        "max_results": 20,
        "orchestrator": {"graph_limit": 20, "depth_by_intent": {"factual": "D3"}},
    }
    user = {
        "id": "ana",
        "orchestrator": {"graph_limit": 5},
        "default_strategy_factual": "semantic_only",
    }
    merged = merge_configs(global_, org=org, user=user)
    assert (merged.id, merged.scope) == ("ana", "user")
    assert merged.orchestrator.graph_limit == 5  # user over org over global
    assert merged.max_results == 20  # org over global
    assert merged.max_depth == global_.max_depth == 2  # global kept
    depths = merged.orchestrator.depth_by_intent
    assert depths["factual"] == "D3" and depths["procedural"] == "D2"  # nested merge
    assert merged.orchestrator.claims_limit == global_.orchestrator.claims_limit
    assert merged.strategy_for("factual") == "semantic_only"
    assert merged.strategy_for("graph_insight") == "graph_only"
    assert global_.orchestrator.graph_limit == 12  # the inputs are left alone


def test_scopes_are_optional(global_: RetrievalConfig) -> None:
    assert merge_configs(global_) == global_
    only_user = merge_configs(global_, user={"max_depth": 3})
    assert only_user.scope == "user" and only_user.max_depth == 3
    assert merge_configs(global_, org={"max_depth": 3}).scope == "org"


@pytest.mark.parametrize(
    ("org", "user", "message"),
    [
        (
            {"orchestrator": {"top_kk": 3}},
            None,
            "org override: orchestrator.top_kk: unknown key",
        ),
        (None, {"max_hops": 3}, "user override: max_hops: unknown key"),
        (
            None,
            {"orchestrator": {"instructions": {"tone": "x"}}},
            "user override: orchestrator.instructions.tone:",
        ),
        ({"scope": "user"}, None, "org override: scope: is 'user'; expected 'org'"),
        (None, {"orchestrator": None}, "user override: orchestrator: must be a mapping of keys"),
        ({"max_depth": 9}, None, "org override: max_depth: must be ≤ 4"),
    ],
)
def test_bad_overrides_are_refused(
    global_: RetrievalConfig, org: Any, user: Any, message: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        merge_configs(global_, org=org, user=user)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_global_must_be_global(global_: RetrievalConfig) -> None:
    org_scoped = global_.model_copy(update={"scope": "org"})
    with pytest.raises(ConfigurationError, match="scope 'org', not 'global'"):
        merge_configs(org_scoped)


def test_loader_lays_override_files_over_the_shipped_config(write: Any) -> None:
    org = write("acme.yaml", {"scope": "org", "orchestrator": {"recent_jobs": 30}})
    user = write("ana.yaml", {"orchestrator": {"recent_jobs": 8, "work_strategy": "vector_rag"}})
    merged = load_retrieval_config(org=org, user=user)
    work = (merged.orchestrator.recent_jobs, merged.orchestrator.work_strategy)
    assert (merged.scope, *work) == ("user", 8, "vector_rag")
    bad = write("bad.yaml", {"orchestrator": {"rerank": 3}})
    with pytest.raises(ConfigurationError) as caught:
        load_retrieval_config(user=bad)
    assert (
        str(caught.value)
        == f"{Path(bad)}: orchestrator.rerank: unknown key; remove it or check its spelling"
    )


def test_a_retired_search_block_is_one_warning_line(
    write: Any, global_: RetrievalConfig, caplog: pytest.LogCaptureFixture
) -> None:
    old = write("ana.yaml", {"search": {"top_k": 5, "weights": {"kg": 0.3}}, "max_depth": 3})
    with caplog.at_level(logging.WARNING, logger="trilha.config.models"):
        merged = load_retrieval_config(user=old)
    assert merged.max_depth == 3 and merged == merge_configs(global_, user={"max_depth": 3})
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"{Path(old)}: search: is ignored") and "\n" not in line
    assert "TRILHA_TOP_K" in line and "profiles/fusion.yaml" in line
