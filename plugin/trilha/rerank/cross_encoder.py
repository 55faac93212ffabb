"""Local cross-encoder rerank over sentence-transformers.

Backends: ``torch`` (fp32, or bf16 autocast on CPU) and ``onnx`` (fp32, or int8 dynamic
quantisation), exported locally and offline into ``cache_dir`` (the model cache every workspace
shares, :mod:`trilha.encode.onnx_export`) on first use, then run on ONNX
Runtime and tokenizers without importing torch. The defaults, ``backend="auto"`` and
``precision="auto"``, take the fastest way with an ordering close to fp32's
(:func:`resolve_backend`): torch bf16 on a CPU with native bf16 (AVX512-BF16 or AMX; ~2.5×
faster than fp32), torch on a GPU, and ONNX int8 on other CPUs (~1.7× faster than torch fp32
for 40 answer windows on 2 AVX2 cores; top-12 overlap with fp32 0.90). Explicit choices:
``precision="auto"`` with ``backend="torch"`` is bf16 where native, else fp32, and with
``backend="onnx"`` fp32.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Literal

from trilha.encode.onnx_export import (
    export_key,
    export_once,
    model_cache,
    older_key,
    quiet_export_warnings,
)
from trilha.encode.onnx_folder import ONNX_FILE
from trilha.errors import ConfigurationError, ModelLoadError, requires_extra
from trilha.ingest.chunking import index_text
from trilha.rerank import onnx_cross_encoder
from trilha.rerank.base import apply_scores
from trilha.rerank.onnx_cross_encoder import OnnxCrossEncoder
from trilha.settings import TrilhaSettings
from trilha.types import Hit

log = logging.getLogger(__name__)

_HOW_TO = (
    "Offline, pass the path of a local folder holding the cross-encoder (config.json, "
    "model weights, tokenizer), e.g. --reranker /path/to/ce-model or "
    "TRILHA_RERANKER_MODEL=/path/to/ce-model"
)
#: What the torch extra's line names when sentence-transformers runs the cross-encoder (the
#: torch backend, or an exported folder the torch-free runner does not read).
_TORCH_RERANKER = "a cross-encoder on sentence-transformers"


def _exported_file(folder: Path, precision: str) -> str | None:
    """The model file for ``precision`` in an exported folder, or None before its export."""
    if precision != "int8":
        return ONNX_FILE if (folder / ONNX_FILE).exists() else None
    quantised = sorted((folder / "onnx").glob("model_*int8_avx2.onnx"))
    return f"onnx/{quantised[0].name}" if quantised else None


def _export(model: str, folder: Path, precision: str) -> None:
    """Export the model to ONNX into ``folder``, and to int8 there when asked (imports torch
    and optimum)."""
    with requires_extra("torch", "exporting a cross-encoder to ONNX"):
        import optimum  # noqa: F401  (sentence-transformers' ONNX backend exports through it)
        from sentence_transformers import CrossEncoder, export_dynamic_quantized_onnx_model
    with quiet_export_warnings():
        CrossEncoder(model, backend="onnx").save_pretrained(str(folder))
        if precision == "int8":
            ce = CrossEncoder(str(folder), backend="onnx", model_kwargs={"file_name": ONNX_FILE})
            export_dynamic_quantized_onnx_model(ce, "avx2", str(folder))


def _onnx_folder(
    model: str, cache_dir: Path, precision: str, older_cache: Path | None = None
) -> tuple[Path, str]:
    """The model exported to ONNX (and int8) in the model cache, exported once, or the export
    an older trilha left in the workspace's ``older_cache``; returns (folder, file name)."""
    key = export_key(model)
    folder = cache_dir / (f"ce-{key}-int8" if precision == "int8" else f"ce-{key}")
    older = older_cache and older_cache / f"ce-{older_key(model, weights=True)}"
    if _exported_file(folder, precision) is None and older and _exported_file(older, precision):
        folder = older
    export_once(
        folder,
        lambda f: _exported_file(f, precision) is not None,
        lambda f: _export(model, f, precision),
    )
    file_name = _exported_file(folder, precision)
    if file_name is None:
        raise ModelLoadError(f"int8 export of {model} wrote no model_*int8_avx2.onnx in {folder}")
    return folder, file_name


Backend = Literal["auto", "torch", "onnx"]
Precision = Literal["auto", "fp32", "bf16", "int8"]
#: Pairs per batch on a CPU: small batches pad less and stay in cache (40 answer windows in
#: ONNX int8 on 2 AVX2 cores: 470-570 ms in batches of 4, 770 ms in batches of 32).
CPU_BATCH = 4
#: Pairs per batch for native bf16 on a CPU (AMX or AVX512-BF16), whose tiles want tall
#: matrices: ask's 40 windows of 80 tokens on 2 Sapphire Rapids cores took 350 ms in batches
#: of 4 and 150-230 ms in one batch (16 or more per batch: 220-240 ms).
CPU_BF16_BATCH = 64
GPU_BATCH = 32


def default_batch(precision: str, gpu: bool) -> int:
    """Pairs per batch when none is given: see :data:`CPU_BATCH` and :data:`CPU_BF16_BATCH`."""
    if gpu:
        return GPU_BATCH
    native = precision == "bf16" and native_bf16_precision() == "bf16"
    return CPU_BF16_BATCH if native else CPU_BATCH


@functools.cache
def native_bf16_precision() -> Literal["bf16", "fp32"]:
    """'bf16' when this CPU computes bf16 natively (AVX512-BF16 or AMX), else 'fp32'. Reads
    /proc/cpuinfo where there is one (no torch import), else asks torch; once per process."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        flags = None
    if flags is not None:
        return "bf16" if (" avx512_bf16" in flags or " amx_bf16" in flags) else "fp32"
    try:
        import torch

        native = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    except (ImportError, AttributeError):
        return "fp32"
    return "bf16" if native else "fp32"


def _gpu(device: str | None) -> bool:
    """Whether the model will run on a GPU: ``device`` names one, or torch, when this process
    imported it already, sees CUDA (``auto`` does not import torch to ask; on a GPU, choose
    ``backend="torch"``)."""
    if device is not None:
        return not device.startswith("cpu")
    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.cuda.is_available())


def resolve_backend(
    backend: Backend, precision: Precision, device: str | None = None
) -> tuple[Literal["torch", "onnx"], Literal["fp32", "bf16", "int8"]]:
    """``auto`` made concrete: see the module's docstring."""
    if backend == "auto":
        if precision == "int8":
            backend = "onnx"
        elif precision in ("fp32", "bf16") or _gpu(device) or native_bf16_precision() == "bf16":
            backend = "torch"
        else:
            return "onnx", "int8"
    if precision != "auto":
        return backend, precision
    if backend == "onnx":
        return "onnx", "fp32"
    return "torch", "fp32" if _gpu(device) else native_bf16_precision()


class CrossEncoderReranker:
    """Reranks hits with a sentence-transformers ``CrossEncoder`` (model id or local path)."""

    def __init__(
        self,
        model: str,
        *,
        top_n: int = 12,
        batch_size: int | None = None,
        max_length: int = 256,
        backend: Backend = "auto",
        precision: Precision = "auto",
        blend: float = 0.0,
        cache_dir: Path | None = None,
        device: str | None = None,
        older_cache: Path | None = None,
    ) -> None:
        if backend == "torch" and precision == "int8":
            raise ConfigurationError("int8 needs backend='onnx'; torch supports fp32 or bf16")
        if backend == "onnx" and precision == "bf16":
            raise ConfigurationError("bf16 needs backend='torch'; onnx supports fp32 or int8")
        if not 0 <= blend < 1:
            raise ConfigurationError("blend must be in [0, 1)")
        self.backend, self.precision = resolve_backend(backend, precision, device)
        self.model_name = model
        self.top_n = top_n
        self.batch_size = batch_size or default_batch(self.precision, _gpu(device))
        self.max_length = max_length
        self.blend = blend
        self.cache_dir = cache_dir or model_cache(TrilhaSettings().model_cache)
        self.older_cache = older_cache
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        """Load the model now (it is otherwise loaded on first use)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        model = self._load_model()
        limit = getattr(model, "max_position_embeddings", None)
        if limit is None:
            limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        if isinstance(limit, int) and self.max_length > limit:
            log.warning(
                "max_length %d exceeds what %s supports; using %d",
                self.max_length,
                self.model_name,
                limit,
            )
            if not isinstance(model, OnnxCrossEncoder):  # the ONNX runner caps it itself
                model.max_seq_length = limit
        return model

    def _load_model(self) -> Any:
        try:
            if self.backend == "onnx":
                folder, file_name = _onnx_folder(
                    self.model_name, self.cache_dir, self.precision, self.older_cache
                )
                if onnx_cross_encoder.supports(folder, file_name):
                    return OnnxCrossEncoder(folder, file_name, self.max_length)
                with requires_extra("torch", _TORCH_RERANKER):
                    from sentence_transformers import CrossEncoder

                return CrossEncoder(
                    str(folder),
                    backend="onnx",
                    max_length=self.max_length,
                    model_kwargs={"file_name": file_name},
                )
            with requires_extra("torch", _TORCH_RERANKER):
                from sentence_transformers import CrossEncoder

            return CrossEncoder(self.model_name, max_length=self.max_length, device=self.device)
        except (OSError, ValueError) as e:
            raise ModelLoadError(
                f"cannot load cross-encoder {self.model_name!r}: {e}. {_HOW_TO}"
            ) from e

    def score(
        self, query: str, passages: Sequence[str], max_length: int | None = None
    ) -> list[float]:
        """Cross-encoder scores of (query, passage) pairs, in input order; ``max_length`` cuts
        each pair shorter than the reranker's own ``max_length`` for this call."""
        if not passages:
            return []
        model = self.load()
        pairs = [(query, p) for p in passages]
        cut = max_length if max_length is not None and max_length < self.max_length else None
        if isinstance(model, OnnxCrossEncoder):
            return [float(s) for s in model.predict(pairs, self.batch_size, cut)]
        context: Any = nullcontext()
        if self.backend == "torch" and self.precision == "bf16":
            import torch

            context = torch.autocast("cpu", dtype=torch.bfloat16)
        shorter = {"processing_kwargs": {"text": {"max_length": cut, "truncation": True}}}
        with context:
            scores = model.predict(
                pairs,
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                **(shorter if cut else {}),
            )
        return [float(s) for s in scores]

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int | None = None) -> list[Hit]:
        """Hits ordered by the cross-encoder, best ``top_n`` kept, retrieval scores kept."""
        scores = self.score(query, [index_text(h.unit) for h in hits])
        return apply_scores(hits, scores, top_n or self.top_n, self.blend)
