"""The exceptions trilha raises.

Every error is a :class:`TrilhaError`; the subclasses say what went wrong and their messages say
what to do about it.
"""

from __future__ import annotations


class TrilhaError(Exception):
    """Base class of every error trilha raises on purpose."""


class ConfigurationError(TrilhaError):
    """A setting, profile or argument has a value trilha cannot use."""


class BadRequestError(TrilhaError, ValueError):
    """The caller asked for something malformed (bad filter, bad k, empty query...)."""


class MissingDependencyError(TrilhaError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install`` to run."""

    def __init__(self, package: str, extra: str | None = None, purpose: str = "") -> None:
        hint = f"pip install 'trilha[{extra}]'" if extra else f"pip install {package}"
        what = f" (needed for {purpose})" if purpose else ""
        super().__init__(f"{package} is not installed{what}. Run: {hint}")
        self.package = package


class ModelLoadError(TrilhaError):
    """A model (encoder or cross-encoder) could not be loaded."""


class BackendUnavailableError(TrilhaError):
    """A store or service (Qdrant, graph, LLM) cannot be reached or failed."""


class WorkspaceError(TrilhaError):
    """The workspace folder is missing, locked or inconsistent."""
