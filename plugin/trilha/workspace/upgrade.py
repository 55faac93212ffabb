"""One-time upgrades of a workspace written by an older trilha, run when it opens.

Each step is idempotent and cheap when there is nothing to do: the encoder check compares two
small JSON objects, the store migrations compare a version stamp, and the graph upgrade asks
the graph whether any node lacks the access fields.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from trilha.access.legacy import ACCESS_VERSION, fail_closed
from trilha.encode.auto import AutoEmbedder
from trilha.encode.base import Embedder
from trilha.errors import ConfigurationError
from trilha.graph.service import GraphService
from trilha.index.dense import DenseIndex
from trilha.index.docstore import DocStore
from trilha.index.tokenize import TOKENIZER_VERSION, tokenize
from trilha.ingest.chunking import index_text
from trilha.settings import AUTO_MODEL, TrilhaSettings
from trilha.types import TextUnit
from trilha.workspace.records import read_record, write_record

log = logging.getLogger(__name__)

#: The file recording which encoder built a workspace's vectors.
ENCODER_FILE = "workspace.json"


def check_encoder(root: Path, embedder: Embedder, settings: TrilhaSettings) -> None:
    """Refuse to open a workspace with another encoder than the one that built it (its vectors
    would not compare); a new workspace records its encoder (``auto``: once it has chosen). An
    ``auto`` that has not chosen, over a workspace that has a record, is such a mismatch:
    :func:`recorded_encoder` gives ``auto`` the recorded model whenever it can."""
    old = read_record(root, settings, ENCODER_FILE)
    if old is None:
        if not (isinstance(embedder, AutoEmbedder) and embedder.chosen is None):
            record_encoder(root, embedder, settings)
        return  # a new workspace: ``auto`` is recorded by record_encoder when it chooses
    info = _encoder_info(embedder, settings)
    if old != info:
        raise ConfigurationError(
            f"workspace {root} was built with {old}, not {info}; open it with the same "
            "encoder settings or ingest into a new workspace"
        )


def _encoder_info(embedder: Embedder, settings: TrilhaSettings) -> dict[str, Any]:
    return {
        "embedding_model": embedder.model_id,
        "embedding_dimension": settings.embedding_dimension,
    }


def record_encoder(root: Path, embedder: Embedder, settings: TrilhaSettings) -> None:
    """Write down the encoder that builds the workspace at ``root``."""
    write_record(root, settings, ENCODER_FILE, _encoder_info(embedder, settings))


#: Settings that choose the encoder; when none is given, a workspace opens with its own.
_ENCODER_SETTINGS = {
    "embedding_model",
    "embedding_dimension",
    "embedding_query_prompt",
    "embedding_passage_prompt",
}


def recorded_encoder(root: Path, settings: TrilhaSettings) -> TrilhaSettings:
    """``settings`` with the encoder a workspace was built with, when the settings name none
    (or name ``auto``): a workspace keeps its encoder when trilha's default model changes, and
    ``auto`` keeps the choice it made at the first ingest."""
    named = settings.model_fields_set & _ENCODER_SETTINGS and settings.embedding_model != AUTO_MODEL
    old = None if named else read_record(root, settings, ENCODER_FILE)
    if old is None:
        return settings
    model, dimension = old.get("embedding_model"), old.get("embedding_dimension")
    if not isinstance(model, str) or " [prompts " in model or not isinstance(dimension, int):
        return settings  # prompts set by settings: check_encoder says which to give
    return settings.model_copy(update={"embedding_model": model, "embedding_dimension": dimension})


def recorded_model(root: Path, settings: TrilhaSettings) -> str | None:
    """The model id the workspace at ``root`` was built with; None when it holds none yet."""
    if read_record(root, settings, ENCODER_FILE) is None:
        return None
    unnamed = settings.model_copy(update={"embedding_model": AUTO_MODEL})
    return recorded_encoder(root, unnamed).embedding_model


def migrate_store(store: DocStore) -> list[str] | None:
    """Bring the stored units up to the current access rules and tokenizer.

    Returns the ids of the units the access migration made private, or None when the store
    was already current (then the dense payloads need no rewrite, see :func:`rewrite_payloads`).
    """
    migrated = store.migrate("access", ACCESS_VERSION, fail_closed)
    redone = store.retokenize(lambda u: tokenize(index_text(u), u.lang), TOKENIZER_VERSION)
    if redone:
        log.warning("re-tokenised %d units for tokenizer version %s", redone, TOKENIZER_VERSION)
    return migrated


def store_current(store: DocStore) -> bool:
    """Whether the store is at the current access rules and tokenizer (nothing to migrate)."""
    return (store.get_meta("access"), store.get_meta("tokenizer")) == (
        ACCESS_VERSION,
        TOKENIZER_VERSION,
    )


def rewrite_payloads(
    store: DocStore, dense: DenseIndex, made_private: list[str], batch: int = 1024
) -> None:
    """Store every unit's current payload beside its vector (after the access rules changed);
    the vectors are read back, nothing is re-encoded."""
    if made_private:
        log.warning(
            "%d units stored before the visibility rules were made private to their owner; "
            "re-ingest their documents with org_id/project_id/acl to share them",
            len(made_private),
        )
    ids = sorted(store.unit_ids())
    for start in range(0, len(ids), batch):
        units = store.get(ids[start : start + batch])
        vectors = dense.vectors(list(units))
        have = [units[u] for u in units if u in vectors]
        if have:
            dense.upsert(have, np.stack([vectors[u.unit_id] for u in have]))


def upgrade_graph_access(graph: GraphService, units: Callable[[], Iterable[TextUnit]]) -> None:
    """Give the Docs and Chunks of a graph written before the access fields existed those of
    ``units`` (the unit store's; until then the policy hides them: it fails closed). Graph
    trouble is logged, never fatal."""
    try:
        written = graph.upgrade_access(units)
    except Exception as e:
        log.warning("graph access upgrade failed (%s); old nodes stay hidden", e)
        return
    if written:
        log.warning("wrote the access fields of %d units into the graph", written)
