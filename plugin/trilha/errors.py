"""The exceptions trilha raises.

Every error is a :class:`TrilhaError`; the subclasses say what went wrong and their messages say
what to do about it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


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
    """A store or service (Qdrant, the graph, an LLM, a remote encoder or reranker) cannot be
    reached or failed; the message names it and why. A search whose remote encoder is down goes
    on with BM25 alone; a search or an answer whose reranker is down keeps the fused order
    (:data:`trilha.rerank.base.RERANK_UNAVAILABLE`); both are warned in the trace."""


if TYPE_CHECKING:
    BackendUnavailable = BackendUnavailableError
else:

    def __getattr__(name: str) -> type[TrilhaError]:
        """``BackendUnavailable``: the deprecated name of :class:`BackendUnavailableError`."""
        if name == "BackendUnavailable":
            warnings.warn(
                "trilha.errors.BackendUnavailable is deprecated; use BackendUnavailableError",
                DeprecationWarning,
                stacklevel=2,
            )
            return BackendUnavailableError
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class WorkspaceError(TrilhaError):
    """The workspace folder is missing, locked or inconsistent."""


class DiskFullError(TrilhaError):
    """The disk has no room for a write; the message names the disk and the bytes needed."""


def one_line(error: ValidationError) -> str:
    """The first problem of a pydantic error as one line: ``field message`` (our validators'
    messages read on from the field name) or ``field: message`` (pydantic's own)."""
    problems = error.errors()
    first = problems[0]
    field = ".".join(str(p) for p in first["loc"])
    if not field:  # a model-level check: its message names the fields itself
        text = first["msg"].removeprefix("Value error, ")
    elif first["type"] == "value_error":
        text = f"{field} {first['msg'].removeprefix('Value error, ')}"
    else:
        text = f"{field}: {first['msg'][:1].lower()}{first['msg'][1:]}"
    more = len(problems) - 1
    return text + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
