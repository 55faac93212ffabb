"""merge_configs: global, then org, then user, key by key (search: too); unknown keys refused."""

from __future__ import annotations

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
    org = {"id": "acme", "max_results": 20, "search": {"top_k": 20, "weights": {"kg": 0.3}}}
    user = {"id": "ana", "search": {"top_k": 5}, "default_strategy_factual": "semantic_only"}
    merged = merge_configs(global_, org=org, user=user)
    assert (merged.id, merged.scope) == ("ana", "user")
    assert merged.search.top_k == 5  # user over org over global
    assert merged.max_results == 20  # org over global
    assert merged.max_depth == global_.max_depth == 2  # global kept
    assert merged.search.weights.kg == 0.3 and merged.search.weights.bm25 == 0.5  # nested merge
    assert merged.search.candidates == 40 and merged.search.merge == "weighted"
    assert merged.strategy_for("factual") == "semantic_only"
    assert merged.strategy_for("graph_insight") == "graph_only"
    assert global_.search.top_k == 10  # the inputs are left alone


def test_scopes_are_optional(global_: RetrievalConfig) -> None:
    assert merge_configs(global_) == global_
    only_user = merge_configs(global_, user={"max_depth": 3})
    assert only_user.scope == "user" and only_user.max_depth == 3
    assert merge_configs(global_, org={"max_depth": 3}).scope == "org"


@pytest.mark.parametrize(
    ("org", "user", "message"),
    [
        ({"search": {"top_kk": 3}}, None, "org override: search.top_kk: unknown key"),
        (None, {"max_hops": 3}, "user override: max_hops: unknown key"),
        (None, {"search": {"weights": {"graph": 1}}}, "user override: search.weights.graph:"),
        ({"scope": "user"}, None, "org override: scope: is 'user'; expected 'org'"),
        (None, {"search": {"top_k": 100}}, "user override: search: candidates (40) must be ≥"),
        (None, {"search": None}, "user override: search: must be a mapping of keys"),
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
    org = write("acme.yaml", {"scope": "org", "search": {"rerank_top_n": 30}})
    user = write("ana.yaml", {"search": {"rerank_top_n": 8, "merge": "rrf"}})
    merged = load_retrieval_config(org=org, user=user)
    assert (merged.scope, merged.search.rerank_top_n, merged.search.merge) == ("user", 8, "rrf")
    bad = write("bad.yaml", {"search": {"rerank": 3}})
    with pytest.raises(ConfigurationError) as caught:
        load_retrieval_config(user=bad)
    assert (
        str(caught.value)
        == f"{Path(bad)}: search.rerank: unknown key; remove it or check its spelling"
    )
