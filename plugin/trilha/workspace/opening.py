"""How a folder becomes the open parts of a workspace: the folder check, the lock, and either
composing the parts or sharing the ones this process already has open.

The lock is per process, not per handle (:mod:`trilha.workspace.lock`): a second
:meth:`~trilha.workspace.Workspace.open` of a folder this process holds (a notebook cell run
again) shares the parts the first one opened, and the last handle closed closes them. The second
open must ask for the same workspace: the same settings, and no other encoder or entity
extractor (one clear error otherwise; a reranker given replaces the shared one).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

from trilha.encode.base import Embedder
from trilha.errors import WorkspaceError
from trilha.graph.build.extract import EntityExtractor
from trilha.index.docstore import STORE_FILE
from trilha.rerank.base import Reranker
from trilha.settings import TrilhaSettings
from trilha.workspace.compose import compose
from trilha.workspace.lock import WorkspaceLock
from trilha.workspace.parts import Parts
from trilha.workspace.shared import check_shareable
from trilha.workspace.upgrade import recorded_encoder


def encoder_settings(
    settings: TrilhaSettings, embedder: Embedder | object | None
) -> tuple[TrilhaSettings, Embedder | None]:
    """The settings and encoder of an open given ``embedder``: a LlamaIndex ``BaseEmbedding``
    is wrapped (:func:`trilha.llamaindex.embedding.settings_for`, imported only then); any other
    is a trilha encoder, left unloaded (``isinstance`` against the :class:`Embedder` protocol
    would read its ``dimension``, loading the model at open)."""
    if not _llamaindex_embedding(embedder):
        return settings, cast("Embedder | None", embedder)
    from trilha.llamaindex.embedding import settings_for

    return settings_for(settings, embedder)


def _llamaindex_embedding(embedder: object) -> bool:
    """Whether ``embedder`` is a LlamaIndex ``BaseEmbedding`` (none can be before LlamaIndex's
    embeddings module is imported)."""
    module = sys.modules.get("llama_index.core.base.embeddings.base")
    return module is not None and isinstance(embedder, module.BaseEmbedding)


def acquire(
    path: str | Path | None, settings: TrilhaSettings, create: bool, read_only: bool | None
) -> tuple[Path, TrilhaSettings, WorkspaceLock | None]:
    """The workspace folder, its settings (with the encoder it records) and its lock (None when
    it is opened read-only: then it must exist and its indices must be servers)."""
    read_only = settings.read_only if read_only is None else read_only
    if read_only:
        check_shareable(settings)
    folder = path if path is not None else settings.workspace
    # a store on a server is the workspace: the folder keeps this process's own files only
    root = workspace_folder(folder, bool(settings.store_url) or (create and not read_only))
    settings = recorded_encoder(root, settings)  # its own encoder unless one is named
    return root, settings, None if read_only else WorkspaceLock.acquire(root)


def open_parts(
    root: Path,
    settings: TrilhaSettings,
    lock: WorkspaceLock | None,
    embedder: Embedder | None,
    reranker: Reranker | None,
    extractor: EntityExtractor | None,
    repair: bool,
) -> Parts:
    """The parts of the workspace at ``root``: the ones this process has open already (see the
    module's note), else newly composed (read-only without a lock). The lock is released when
    they cannot be had."""
    try:
        if lock is not None and lock.parts is not None:
            return _shared(root, lock, settings, embedder, reranker, extractor)
        parts = compose(root, settings, embedder, reranker, extractor, repair=repair,
                        read_only=lock is None)  # fmt: skip
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    if lock is not None:
        lock.parts, lock.settings = parts, settings
    return parts


def _shared(
    root: Path,
    lock: WorkspaceLock,
    settings: TrilhaSettings,
    embedder: Embedder | None,
    reranker: Reranker | None,
    extractor: EntityExtractor | None,
) -> Parts:
    """The parts a handle of this process opened, when this open asks for the same workspace."""
    parts = lock.parts
    assert isinstance(parts, Parts)
    other = (
        "other settings"
        if _without_encoder(settings) != _without_encoder(lock.settings)
        else "another encoder"
        if embedder is not None and embedder.model_id != parts.embedder.model_id
        else "an entity extractor"
        if extractor is not None
        else None
    )
    if other is not None:
        raise WorkspaceError(
            f"workspace {root} is already open in this process; close that handle first "
            f"(ws.close()) to open it with {other}"
        )
    if reranker is not None:
        parts.reranker.set(reranker)
    return parts


def _without_encoder(settings: TrilhaSettings) -> dict[str, object]:
    """The settings but the encoder's model and dimension (a new workspace records its encoder
    at its first ingest, and later opens read it back)."""
    return settings.model_dump(exclude={"embedding_model", "embedding_dimension"})


def workspace_folder(path: str | Path, create: bool) -> Path:
    """The workspace folder at ``path``, made when ``create`` allows a new one."""
    root = Path(path).expanduser()
    if not (root / STORE_FILE).exists():
        if not create:
            raise WorkspaceError(
                f"no trilha workspace at {root}; check the path, or create one with "
                f"Workspace.open(path, create=True) or `trilha ingest PATH -w {root}`"
            )
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} is a file, not a workspace folder")
    root.mkdir(parents=True, exist_ok=True)
    return root
