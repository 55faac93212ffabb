"""The packaged MiniLM written as ONNX without torch: the vectors of sentence-transformers, and no
torch, transformers or optimum imported to write or run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.encode.test_onnx_encoder import HEAVY, TEXTS
from trilha.encode import bert_graph
from trilha.encode.onnx_encoder import OnnxSentenceEncoder, supports
from trilha.encode.sentence_transformers import resolve_model_path
from trilha.settings import PACKAGED_MODEL

SOURCE = Path(resolve_model_path(PACKAGED_MODEL))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bert") / "encoder"
    bert_graph.export(SOURCE, folder)
    return folder


def test_the_packaged_model_is_a_bert_folder_it_writes(written: Path) -> None:
    assert bert_graph.supports(SOURCE)
    assert supports(written)  # the torch-free runner reads what was written
    assert not list(written.glob("*.safetensors"))  # the weights live in the graph only


def test_vectors_equal_sentence_transformers_on_torch(written: Path) -> None:
    st = pytest.importorskip("sentence_transformers")
    reference = st.SentenceTransformer(str(SOURCE), device="cpu").encode(
        TEXTS, batch_size=2, normalize_embeddings=True, convert_to_numpy=True
    )
    ours = OnnxSentenceEncoder(written)
    assert (ours.dimension, ours.max_seq_length) == (384, 256)
    vectors = ours.encode(TEXTS, batch_size=2)
    np.testing.assert_allclose(vectors, reference, atol=1e-5)
    assert float((vectors * reference).sum(axis=1).min()) >= 0.99999


def test_a_folder_that_is_no_plain_bert_is_left_to_optimum(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").touch()
    (tmp_path / "tokenizer.json").touch()
    config = {"model_type": "xlm-roberta", "hidden_act": "gelu", "hidden_size": 384}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert not bert_graph.supports(tmp_path)
    config.update(model_type="bert", num_hidden_layers=6, num_attention_heads=12)
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert bert_graph.supports(tmp_path)
    (tmp_path / "model.safetensors").unlink()  # a .bin checkpoint needs torch to read
    assert not bert_graph.supports(tmp_path)


def test_writing_and_running_the_default_encoder_imports_no_torch(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from trilha.encode.sentence_transformers import SentenceTransformerEmbedder\n"
        f"e = SentenceTransformerEmbedder(cache_dir=Path({str(tmp_path)!r}))\n"
        "print(e.encode_queries(['vpn']).shape)\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n")[:2] == ["(1, 384)", "[]"]
    assert (next(tmp_path.glob("encoder-*")) / "onnx" / "model.onnx").exists()
