"""The one-off ONNX export prints no deprecation notice about ``torch_dtype``, and none of
sentence-transformers' lines asking the user to save the export (trilha saves it itself)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_export_prints_no_torch_dtype_notice(tmp_path: Path) -> None:
    script = (
        "from pathlib import Path\n"
        "from trilha.encode.sentence_transformers import SentenceTransformerEmbedder\n"
        f"e = SentenceTransformerEmbedder(cache_dir=Path({str(tmp_path)!r}))\n"
        "print(e.encode_queries(['vpn']).shape)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "(1, 384)"
    assert (next(tmp_path.glob("encoder-*")) / "onnx" / "model.onnx").exists()
    assert "torch_dtype" not in done.stderr
    assert "heavily recommended" not in done.stderr and "save_pretrained" not in done.stderr
    assert "Exporting the model" not in done.stderr
