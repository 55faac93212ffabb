"""The torch-free ONNX encoder: same vectors as sentence-transformers, and no torch on a query."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import make_docs, packaged_export
from trilha.encode.onnx_encoder import OnnxSentenceEncoder, pool, pooling_mode, supports
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

HEAVY = ("torch", "transformers", "sentence_transformers", "optimum")
TEXTS = [
    "remote work requirements",
    "  Política de trabalho remoto: VPN e notebook  ",
    "图数据库 的 查询",
    "",
    "incident " * 400,  # past the 256-token limit: truncated alike
]


def _exported(embedder: SentenceTransformerEmbedder) -> Path:
    embedder.encode_queries(["warm up"])
    return packaged_export()


def test_pool_table() -> None:
    tokens = np.array([[[1.0, 2.0], [3.0, -4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)  # the third token is padding
    assert pool(tokens, mask, "mean").tolist() == [[2.0, -1.0]]
    assert pool(tokens, mask, "max").tolist() == [[3.0, 2.0]]
    assert pool(tokens, mask, "cls").tolist() == [[1.0, 2.0]]


def test_vectors_equal_sentence_transformers(embedder: SentenceTransformerEmbedder) -> None:
    from sentence_transformers import SentenceTransformer

    folder = _exported(embedder)
    ours = OnnxSentenceEncoder(folder)
    reference = SentenceTransformer(str(folder), backend="onnx").encode(
        TEXTS, batch_size=2, normalize_embeddings=True, convert_to_numpy=True
    )
    assert (ours.dimension, ours.max_seq_length) == (384, 256)
    np.testing.assert_allclose(ours.encode(TEXTS, batch_size=2), reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours.encode(TEXTS[:2]), axis=1), 1.0, atol=1e-6)


def _fake_folder(tmp_path: Path, modules: list[str], pooling: dict[str, object]) -> Path:
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "model.onnx").touch()
    (tmp_path / "tokenizer.json").touch()
    entries = [{"type": f"sentence_transformers.models.{m}"} for m in modules]
    (tmp_path / "modules.json").write_text(json.dumps(entries))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return tmp_path


@pytest.mark.parametrize(
    ("modules", "pooling", "mode", "ok"),
    [
        (["Transformer", "Pooling", "Normalize"], {"pooling_mode": "mean"}, "mean", True),
        (["Transformer", "Pooling"], {"pooling_mode_cls_token": True}, "cls", True),
        (["Transformer", "Pooling", "Dense"], {"pooling_mode": "mean"}, "mean", False),
        (["Transformer", "Pooling"], {"pooling_mode": "lasttoken"}, None, False),
        (
            ["Transformer", "Pooling"],
            {"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True},
            None,
            False,
        ),
    ],
)
def test_supports_only_what_it_reproduces(
    tmp_path: Path, modules: list[str], pooling: dict[str, object], mode: str | None, ok: bool
) -> None:
    folder = _fake_folder(tmp_path, modules, pooling)
    assert pooling_mode(folder) == mode
    assert supports(folder) is ok


def test_cli_query_with_onnx_loads_no_torch(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    root = tmp_path / "ws"
    with Workspace.open(
        root, TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    ) as ws:
        ws.ingest(make_docs())
    _exported(embedder)  # in the model cache the process started below shares
    script = (
        "import sys\n"
        "from trilha.cli.main import main\n"
        f"code = main(['query', 'VPN notebook', '-w', {str(root)!r}, '-k', '2'])\n"
        f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    env = {**os.environ, "TRILHA_GRAPH_BACKEND": "none"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert "pol-remote" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "0 []"
