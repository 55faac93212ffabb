"""The exceptions trilha raises.

Every error is a :class:`TrilhaError`; the subclasses say what went wrong and their messages say
what to do about it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
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
    """A part of trilha whose packages are not installed was used; the message is one line
    naming what needs them and the ``pip install`` that brings them: an extra of trilha's
    (``pip install 'trilha[eval]'``), for a dependency of the core the package itself, or the
    ``install`` line given.
    Raised through :func:`requires_extra` (or, for the core, with ``extra=None``)."""

    def __init__(
        self, package: str, extra: str | None = None, purpose: str = "", install: str = ""
    ) -> None:
        what = purpose or package
        if install:
            line = f"{what} needs {package}: {install}"
        elif extra:
            line = f"{what} needs the {extra} extra: pip install 'trilha[{extra}]'"
        else:
            line = f"{what} needs {package}, a dependency of trilha: pip install '{package}'"
        super().__init__(line)
        self.package = package
        self.extra = extra


@contextmanager
def requires_extra(extra: str, what: str) -> Iterator[None]:
    """Imports in the block come with trilha's ``extra``: one that is missing raises
    :class:`MissingDependencyError` (``what needs the X extra: pip install 'trilha[X]'``).

    ``what`` names the feature for the reader of the line (``trilha eval``, ``the Redis result
    cache (TRILHA_REDIS_URL)``). An import error inside trilha itself is a bug and passes
    through.
    """
    try:
        yield
    except MissingDependencyError:
        raise
    except ImportError as e:
        name = e.name or ""
        if name == "trilha" or name.startswith("trilha."):
            raise
        raise MissingDependencyError(name or extra, extra, what) from e


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
