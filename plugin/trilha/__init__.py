"""trilha: hybrid, graph-aware retrieval with provenance for LlamaIndex agents.

Public API: :class:`Workspace` (open a corpus, ingest, search), the boundary types, the
settings and the errors. LlamaIndex adapters live in :mod:`trilha.llamaindex`
(``trilha.TrilhaIndex``, the managed index, is loaded from there on first use).
"""

from typing import TYPE_CHECKING, Any

from trilha.lazy import attribute

if TYPE_CHECKING:
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
    from trilha.llamaindex.index import TrilhaIndex
    from trilha.request import SearchRequest
    from trilha.retrieve.fusion import Weights
    from trilha.settings import TrilhaSettings
    from trilha.types import (
        Citation,
        Hit,
        SearchFilters,
        SearchResult,
        StageScores,
        TextUnit,
        Trace,
    )
    from trilha.workspace import Workspace

__version__ = "0.1.0"

_ERRORS = ("BackendUnavailableError", "BadRequestError", "ConfigurationError")
_MORE_ERRORS = ("MissingDependencyError", "ModelLoadError", "TrilhaError", "WorkspaceError")
_TYPES = ("Citation", "Hit", "SearchFilters", "SearchResult", "StageScores", "TextUnit", "Trace")
#: The module of each public name, imported on first use: ``import trilha`` loads nothing else,
#: and ``trilha.TrilhaIndex`` alone loads LlamaIndex.
_WHERE = {
    "Principal": "trilha.access",
    **dict.fromkeys((*_ERRORS, *_MORE_ERRORS), "trilha.errors"),
    "TrilhaIndex": "trilha.llamaindex.index",
    "SearchRequest": "trilha.request",
    "Weights": "trilha.retrieve.fusion",
    "TrilhaSettings": "trilha.settings",
    **dict.fromkeys(_TYPES, "trilha.types"),
    "Workspace": "trilha.workspace",
}


def __getattr__(name: str) -> Any:
    return attribute(globals(), _WHERE, name)


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
