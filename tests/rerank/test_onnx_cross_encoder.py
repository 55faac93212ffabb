"""The torch-free ONNX cross-encoder: same scores as sentence-transformers, no torch to rerank."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.rerank.onnx_cross_encoder import OnnxCrossEncoder, activation, supports

QUERY = "security incident report within one hour"
PASSAGES = [
    "report every security incident to the soc within one hour",
    "vpn and laptop policy",
    "",
    "prazo de cobrança " * 200,  # past max_length: truncated alike
    "dados pessoais anpd",
]


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_scores_equal_sentence_transformers(
    tiny_cross_encoder: Path, tmp_path: Path, precision: str
) -> None:
    from sentence_transformers import CrossEncoder

    reranker = CrossEncoderReranker(
        str(tiny_cross_encoder),
        backend="onnx",
        precision=precision,  # type: ignore[arg-type]
        max_length=64,
        batch_size=2,
        cache_dir=tmp_path,
    )
    ours = reranker.score(QUERY, PASSAGES)
    model = reranker.load()
    assert isinstance(model, OnnxCrossEncoder)
    folder = next(tmp_path.glob("ce-*"))
    file_name = str(next((folder / "onnx").glob("*int8*" if precision == "int8" else "model.onnx")))
    reference = CrossEncoder(
        str(folder),
        backend="onnx",
        max_length=64,
        model_kwargs={"file_name": str(Path(file_name).relative_to(folder))},
    ).predict([(QUERY, p) for p in PASSAGES], batch_size=2)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    assert all(0 < s < 1 for s in ours)  # one label: sigmoid, as sentence-transformers does


@pytest.mark.parametrize(
    ("config", "found"),
    [
        ({}, "sigmoid"),
        ({"activation_fn": "torch.nn.modules.linear.Identity"}, "identity"),
        ({"activation_fn": "torch.nn.modules.activation.Tanh"}, None),
    ],
)
def test_activation_from_the_folder(tmp_path: Path, config: dict[str, str], found: str) -> None:
    (tmp_path / "config_sentence_transformers.json").write_text(json.dumps(config))
    assert activation(tmp_path) == found


def test_two_labels_are_left_to_sentence_transformers(tmp_path: Path) -> None:
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "model.onnx").touch()
    (tmp_path / "tokenizer.json").touch()
    assert supports(tmp_path, "onnx/model.onnx")
    (tmp_path / "config.json").write_text(json.dumps({"id2label": {"0": "no", "1": "yes"}}))
    assert not supports(tmp_path, "onnx/model.onnx")


def test_onnx_rerank_loads_no_torch(tiny_cross_encoder: Path, tmp_path: Path) -> None:
    CrossEncoderReranker(str(tiny_cross_encoder), backend="onnx", cache_dir=tmp_path).load()
    script = (
        "import sys\n"
        "from trilha.rerank.cross_encoder import CrossEncoderReranker\n"
        f"r = CrossEncoderReranker({str(tiny_cross_encoder)!r}, backend='onnx', "
        f"cache_dir=__import__('pathlib').Path({str(tmp_path)!r}))\n"
        "print(len(r.score('vpn', ['vpn policy', 'laptop'])), "
        "sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n")[-2] == "2 []"


@pytest.mark.parametrize("backend", ["onnx", "torch"])
def test_a_call_may_read_shorter_pairs(
    tiny_cross_encoder: Path, tmp_path: Path, backend: str
) -> None:
    """``score(..., max_length=n)`` scores as a reranker built with ``max_length=n`` does, and
    leaves the reranker's own limit for the next call."""

    def build(max_length: int) -> CrossEncoderReranker:
        return CrossEncoderReranker(
            str(tiny_cross_encoder),
            backend=backend,  # type: ignore[arg-type]
            precision="fp32",
            max_length=max_length,
            cache_dir=tmp_path,
        )

    long_reader, short_reader = build(64), build(12)
    cut = long_reader.score(QUERY, PASSAGES, max_length=12)
    np.testing.assert_allclose(cut, short_reader.score(QUERY, PASSAGES), atol=1e-7, rtol=0)
    whole = long_reader.score(QUERY, PASSAGES)
    np.testing.assert_allclose(whole, build(64).score(QUERY, PASSAGES), atol=1e-7, rtol=0)
    # the tiny model's scores sit near 0.5: the long passages, read further, still move them
    assert np.abs(np.subtract(cut, whole)).max() > 1e-6
    assert long_reader.score(QUERY, PASSAGES, max_length=500) == pytest.approx(whole, abs=1e-7)
