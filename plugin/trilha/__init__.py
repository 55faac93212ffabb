"""trilha: hybrid, graph-aware retrieval with provenance for LlamaIndex agents.

Public API: :class:`Workspace` (open a corpus, ingest, search), the boundary types, the
settings and the errors. LlamaIndex adapters live in :mod:`trilha.llamaindex`.
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
    "TrilhaSettings",
    "Weights",
    "Workspace",
    "WorkspaceError",
    "__version__",
]
