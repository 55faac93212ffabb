"""Cross-encoder scores from an exported ONNX folder without torch: tokenise pairs, run, activate.

Runs single-label sequence-classification folders whose activation is Sigmoid (the default for
one label) or Identity, as sentence-transformers exports them; :func:`supports` says whether a
folder is one. Scores equal sentence-transformers' own ONNX backend to float rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from trilha.encode.onnx_folder import module_kinds, read_json, shared_model

Activation = Literal["sigmoid", "identity"]
_ACTIVATIONS: dict[str, Activation] = {"Sigmoid": "sigmoid", "Identity": "identity"}


def activation(folder: Path) -> Activation | None:
    """The activation sentence-transformers applies to this folder's logits, if supported."""
    config = read_json(folder, "config.json")
    path = (
        read_json(folder, "config_sentence_transformers.json").get("activation_fn")
        or (config.get("sentence_transformers") or {}).get("activation_fn")
        or config.get("sbert_ce_default_activation_function")
        or "torch.nn.Sigmoid"  # the default when the model has one label
    )
    return _ACTIVATIONS.get(str(path).rsplit(".", 1)[-1])


def supports(folder: Path, file_name: str) -> bool:
    """Whether ``folder`` holds an exported one-label cross-encoder this runner reproduces."""
    labels = read_json(folder, "config.json").get("id2label") or {"0": "LABEL_0"}
    return (
        (folder / file_name).exists()
        and (folder / "tokenizer.json").exists()
        and module_kinds(folder) in ([], ["Transformer"])
        and len(labels) == 1
        and activation(folder) is not None
    )


class OnnxCrossEncoder:
    """Scores (query, passage) pairs with an exported cross-encoder on ONNX Runtime."""

    def __init__(self, folder: Path, file_name: str, max_length: int) -> None:
        found = activation(folder)
        if found is None:
            raise ValueError(f"{folder}: activation is not Sigmoid or Identity; check supports()")
        self.activation: Activation = found
        self.max_position_embeddings = read_json(folder, "config.json").get(
            "max_position_embeddings"
        )
        limit = self.max_position_embeddings
        token_limit = min(max_length, limit) if isinstance(limit, int) else max_length
        self.model = shared_model(folder, file_name, token_limit)

    def predict(
        self,
        pairs: Sequence[tuple[str, str]],
        batch_size: int = 32,
        max_length: int | None = None,
    ) -> npt.NDArray[np.float32]:
        """One score per pair, in input order, each pair cut to ``max_length`` tokens when that
        is below the model's limit. Batches group pairs of similar length the way
        sentence-transformers does, which int8 models (quantised per batch) need to score alike."""
        order = np.argsort([-(len(q) + len(p)) for q, p in pairs])
        out = np.zeros(len(pairs), dtype=np.float32)
        for start in range(0, len(pairs), batch_size):
            rows = order[start : start + batch_size]
            logits, _ = self.model.run([pairs[i] for i in rows], max_length)
            out[rows] = logits[:, 0]
        if self.activation == "sigmoid":
            out = np.asarray(1.0 / (1.0 + np.exp(-out)), dtype=np.float32)
        return out
