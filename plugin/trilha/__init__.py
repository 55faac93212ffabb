"""trilha: hybrid, graph-aware retrieval with provenance for LlamaIndex agents.

Public API: :class:`Workspace` (open a corpus, ingest, search), the boundary types, the
settings and the errors. LlamaIndex adapters live in :mod:`trilha.llamaindex`
(``trilha.TrilhaIndex``, the managed index, is loaded from there on first use).
"""

from trilha.access import Principal
from trilha.errors import (
    BackendUnavailableError,
    BadRequestError,
    ConfigurationError,
    MissingDependencyError,
    ModelLoadError,
    TrilhaError,
    WorkspaceError,
)
from trilha.request import SearchRequest
from trilha.retrieve.fusion import Weights
from trilha.settings import TrilhaSettings
from trilha.types import Citation, Hit, SearchFilters, SearchResult, StageScores, TextUnit, Trace
from trilha.workspace import Workspace

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``trilha.TrilhaIndex``, imported on first use (LlamaIndex is not loaded before)."""
    if name == "TrilhaIndex":
        from trilha.llamaindex.index import TrilhaIndex

        return TrilhaIndex
    raise AttributeError(f"module 'trilha' has no attribute {name!r}")


__all__ = [
    "BackendUnavailableError",
    "BadRequestError",
    "Citation",
    "ConfigurationError",
    "Hit",
    "MissingDependencyError",
    "ModelLoadError",
    "Principal",
    "SearchFilters",
    "SearchRequest",
    "SearchResult",
    "StageScores",
    "TextUnit",
    "Trace",
    "TrilhaError",
    "TrilhaIndex",
    "TrilhaSettings",
    "Weights",
    "Workspace",
    "WorkspaceError",
    "__version__",
]
