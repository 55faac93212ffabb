"""A workspace opens with the encoder that built it unless the settings name one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.errors import ConfigurationError
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace
from trilha.workspace.upgrade import ENCODER_FILE, recorded_encoder


def _built_with(folder: Path, model: str, dimension: int = 384) -> None:
    folder.mkdir()
    info = {"embedding_model": model, "embedding_dimension": dimension}
    (folder / ENCODER_FILE).write_text(json.dumps(info))


def test_the_recorded_model_is_used_when_none_is_named(tmp_path: Path) -> None:
    _built_with(tmp_path / "ws", "multilingual-e5-small-enpt")
    settings = recorded_encoder(tmp_path / "ws", TrilhaSettings(graph_backend="none"))
    assert settings.embedding_model == "multilingual-e5-small-enpt"
    with Workspace.open(tmp_path / "ws", TrilhaSettings(graph_backend="none"), create=True) as ws:
        assert ws.embedder.model_id == "multilingual-e5-small-enpt"


def test_a_named_model_must_match_the_recorded_one(tmp_path: Path) -> None:
    _built_with(tmp_path / "ws", "multilingual-e5-small-enpt")
    named = TrilhaSettings(graph_backend="none", embedding_model="multilingual-e5-small")
    assert recorded_encoder(tmp_path / "ws", named) is named
    with pytest.raises(ConfigurationError, match="was built with"):
        Workspace.open(tmp_path / "ws", named, create=True)


def test_a_new_workspace_takes_the_settings(tmp_path: Path) -> None:
    settings = TrilhaSettings(graph_backend="none")
    assert recorded_encoder(tmp_path, settings) is settings
