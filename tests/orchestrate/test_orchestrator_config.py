"""The orchestrator's configuration in a workspace: overrides per workspace and per user, checks
at load, and conversation memory mirrored into the graph when the settings ask for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import ConfigurationError
from trilha.orchestrate import Orchestrator, OrchestratorConfig
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace


def test_a_user_override_changes_only_that_users_config(tmp_path: Path) -> None:
    users = tmp_path / "profiles" / "users"
    users.mkdir(parents=True)
    (users / "ana.yaml").write_text(yaml.safe_dump({"max_results": 3}), encoding="utf-8")
    (tmp_path / "profiles" / "org.yaml").write_text(
        yaml.safe_dump({"orchestrator": {"semantic_top_k": 4}}), encoding="utf-8"
    )
    config = OrchestratorConfig.load(tmp_path)
    assert config.for_user("ana").max_results == 3
    assert config.for_user("bia").max_results == config.retrieval.max_results != 3
    assert config.for_user("ana").orchestrator.semantic_top_k == 4  # the org's, kept
    assert config.for_user("../ana").max_results != 3  # never a path outside users/


def test_a_working_set_profile_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "org.yaml").write_text(
        yaml.safe_dump({"orchestrator": {"working_set_profile": "nope"}}), encoding="utf-8"
    )
    with pytest.raises(ConfigurationError, match="working_set_profile: no profile named 'nope'"):
        OrchestratorConfig.load(tmp_path)


def test_turns_go_to_the_graph_when_the_settings_ask(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    settings = TrilhaSettings(graph_backend="falkordb", memory_in_graph=True)
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        orchestrator = Orchestrator(ws)
        turn = orchestrator.memory.record_turn("ana", "c1", "user", "Quando vence o ROPA?")
        rows = ws.require_graph().store.run(
            "MATCH (m:Memory {id: $id}) RETURN m.owner_id AS owner, m.visibility AS vis",
            {"id": turn.turn_id},
        )
        assert [(r["owner"], r["vis"]) for r in rows] == [("ana", "private")]
        orchestrator.close()
