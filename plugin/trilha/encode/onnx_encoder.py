"""Sentence vectors from an exported ONNX folder without torch: tokenise, run, pool, normalise.

Runs folders whose modules are a Transformer, a Pooling (mean, cls or max) and optionally a
Normalize, as sentence-transformers exports them; :func:`supports` says whether a folder is one.
The vectors equal sentence-transformers' own ONNX backend to float rounding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from trilha.encode.onnx_folder import ONNX_FILE, max_length, module_kinds, read_json, shared_model

PoolingMode = Literal["mean", "cls", "max"]
_MODULES = ("Transformer", "Pooling", "Normalize")
_OLD_KEYS: dict[str, PoolingMode] = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}


def pooling_mode(folder: Path) -> PoolingMode | None:
    """The folder's pooling mode when it is one this runner computes, else None."""
    config = read_json(folder / "1_Pooling", "config.json")
    mode = config.get("pooling_mode")
    if mode is None:  # sentence-transformers < 5 wrote one boolean per mode
        on = [m for key, m in _OLD_KEYS.items() if config.get(key)]
        others = [k for k, v in config.items() if k.startswith("pooling_mode_") and v]
        mode = on[0] if len(on) == 1 and len(others) == 1 else None
    return mode if mode in ("mean", "cls", "max") else None


def supports(folder: Path, file_name: str = ONNX_FILE) -> bool:
    """Whether ``folder`` holds an exported model this runner reproduces exactly."""
    kinds = module_kinds(folder)
    return (
        (folder / file_name).exists()
        and (folder / "tokenizer.json").exists()
        and kinds[:2] == ["Transformer", "Pooling"]
        and all(k in _MODULES for k in kinds)
        and pooling_mode(folder) is not None
    )


def pool(
    tokens: npt.NDArray[np.float32], mask: npt.NDArray[np.int64], mode: PoolingMode
) -> npt.NDArray[np.float32]:
    """One vector per row of ``tokens`` (batch, length, dim), padding excluded by ``mask``."""
    weights = mask[:, :, None].astype(np.float32)
    if mode == "cls":
        pooled = tokens[:, 0]
    elif mode == "max":
        pooled = np.where(weights > 0, tokens, np.float32(-1e9)).max(axis=1)
    else:
        pooled = (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return np.asarray(pooled, dtype=np.float32)


def normalise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


class OnnxSentenceEncoder:
    """Encodes with an exported sentence-transformers folder on ONNX Runtime."""

    def __init__(self, folder: Path, file_name: str = ONNX_FILE) -> None:
        mode = pooling_mode(folder)
        if mode is None:
            raise ValueError(f"{folder}: pooling is not mean, cls or max; check supports() first")
        self.mode: PoolingMode = mode
        self.model = shared_model(folder, file_name, max_length(folder))
        out_dim = self.model.session.get_outputs()[0].shape[-1]
        pooling = read_json(folder / "1_Pooling", "config.json")
        dim = out_dim if isinstance(out_dim, int) else pooling.get("embedding_dimension")
        self.dimension = int(dim or pooling.get("word_embedding_dimension") or 0)
        prompts = read_json(folder, "config_sentence_transformers.json").get("prompts") or {}
        #: The prompts the model's config defines, by name (the caller decides which to apply).
        self.prompts = (
            {str(k): str(v) for k, v in prompts.items()} if isinstance(prompts, dict) else {}
        )

    @property
    def max_seq_length(self) -> int:
        """Token limit; longer texts are truncated."""
        return self.model.token_limit

    def encode(
        self, texts: Sequence[str], batch_size: int = 64, show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Unit vectors, one row per text; batches group texts of similar length."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        starts: Iterable[int] = range(0, len(order), batch_size)
        if show_progress:
            from tqdm import tqdm

            starts = tqdm(starts, desc="encode", unit="batch")
        for start in starts:
            rows = order[start : start + batch_size]
            tokens, mask = self.model.run([texts[i].strip() for i in rows])
            out[rows] = normalise(pool(tokens, mask, self.mode))
        return out
