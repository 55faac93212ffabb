"""Read a sentence-transformers folder exported to ONNX, with ONNX Runtime and tokenizers alone.

Importing sentence-transformers pulls torch and transformers, seconds per process; running an
already exported model needs neither. The encoder and the cross-encoder runners share what is
here: the folder's JSON files, its module list, the tokenizer and the inference session, loaded
once per process (:func:`shared_model`) however many workspaces run it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.errors import MissingDependencyError, ModelLoadError

ONNX_FILE = "onnx/model.onnx"
# Without limits in the folder, the token limit BERT-family models are trained with.
DEFAULT_MAX_LENGTH = 512


def read_json(folder: Path, name: str) -> dict[str, Any]:
    """The JSON object in ``folder/name``, or ``{}`` when the file is absent."""
    path = folder / name
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelLoadError(f"{path}: not readable JSON ({e}); export the model again") from e
    return data if isinstance(data, dict) else {}


def module_kinds(folder: Path) -> list[str]:
    """Class names of the folder's sentence-transformers modules, in order (``modules.json``)."""
    path = folder / "modules.json"
    if not path.exists():
        return []
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelLoadError(f"{path}: not readable JSON ({e}); export the model again") from e
    return [str(e.get("type", "")).rsplit(".", 1)[-1] for e in entries if isinstance(e, dict)]


def max_length(folder: Path, configured: int | None = None) -> int:
    """Token limit: ``configured``, else the folder's own, capped by the position embeddings."""
    limit = configured or read_json(folder, "sentence_bert_config.json").get("max_seq_length")
    if not isinstance(limit, int):
        own = read_json(folder, "tokenizer_config.json").get("model_max_length")
        limit = own if isinstance(own, int) and own < 1_000_000 else DEFAULT_MAX_LENGTH
    positions = read_json(folder, "config.json").get("max_position_embeddings")
    return min(limit, positions) if isinstance(positions, int) and positions > 0 else limit


class OnnxTextModel:
    """A tokenizer and an inference session over one exported model file."""

    def __init__(self, folder: Path, file_name: str, token_limit: int) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as e:
            raise MissingDependencyError("onnxruntime", purpose="the ONNX backend") from e
        try:
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3
            self.session = onnxruntime.InferenceSession(
                str(folder / file_name), options, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # tokenizers and onnxruntime raise their own bare exceptions
            raise ModelLoadError(f"cannot load the ONNX model in {folder}: {e}") from e
        tokenizer.enable_truncation(max_length=token_limit)
        padding = tokenizer.padding or {}
        tokenizer.enable_padding(
            pad_id=int(padding.get("pad_id", 0)), pad_token=str(padding.get("pad_token", "[PAD]"))
        )
        self.tokenizer = tokenizer
        self.token_limit = token_limit
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._shorter: dict[int, Any] = {}  # tokenizers cut shorter than token_limit, by limit

    def run(
        self, texts: Sequence[str] | Sequence[tuple[str, str]], token_limit: int | None = None
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The model's first output and the attention mask for a batch of texts or pairs, each
        cut to ``token_limit`` tokens when that is below the model's own limit."""
        encodings = self._tokenizer(token_limit).encode_batch(list(texts))
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        output = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        return np.asarray(output, dtype=np.float32), feed["attention_mask"]

    def _tokenizer(self, token_limit: int | None) -> Any:
        """The tokenizer cutting at ``min(token_limit, self.token_limit)`` (a copy per limit:
        truncation is a tokenizer's state, and other threads may be using this one)."""
        if token_limit is None or token_limit >= self.token_limit:
            return self.tokenizer
        shorter = self._shorter.get(token_limit)
        if shorter is None:
            from tokenizers import Tokenizer

            shorter = Tokenizer.from_str(self.tokenizer.to_str())
            shorter.enable_truncation(max_length=token_limit)
            self._shorter[token_limit] = shorter
        return shorter


#: The models this process loaded, by model file (path, size, time) and token limit.
_LOADED: dict[tuple[str, int, int, int], OnnxTextModel] = {}
_LOADING = threading.Lock()


def shared_model(folder: Path, file_name: str, token_limit: int) -> OnnxTextModel:
    """The model in ``folder/file_name`` cut at ``token_limit``, loaded once per process and
    shared by every encoder and reranker that runs it (every workspace open in the process);
    loaded again when the file was written again."""
    path = folder / file_name
    try:
        stat = path.stat()
    except OSError:
        return OnnxTextModel(folder, file_name, token_limit)  # says what is missing
    key = (str(path.resolve()), token_limit, stat.st_size, stat.st_mtime_ns)
    with _LOADING:
        model = _LOADED.get(key)
        if model is None:
            model = _LOADED[key] = OnnxTextModel(folder, file_name, token_limit)
    return model
