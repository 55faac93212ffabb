"""The model cache and the one-off ONNX export into it (the only step that needs torch and
optimum).

Every workspace of a user shares one cache folder (:func:`model_cache`, ``TRILHA_MODEL_CACHE``):
a model is exported there once, under a key that changes with the model's files
(:func:`export_key`), by :func:`export_once`, which writes a temporary sibling and renames it, so
a reader never sees half a model and two processes exporting at once leave one whole copy.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from trilha.diskspace import disk_full_errors
from trilha.errors import ConfigurationError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: exporters race, the first rename wins
    fcntl = None  # type: ignore[assignment]

# optimum's exporter passes ``torch_dtype`` to transformers, which renamed it ``dtype`` and logs a
# deprecation on every export; trilha passes no dtype, so the line only confuses users.
_TORCH_DTYPE_NOTICE = "`torch_dtype` is deprecated"
# sentence-transformers announces the export it does ("No 'onnx/model.onnx' found ...") and asks
# the user to save it ("Saving the exported ONNX model is heavily recommended ..."): trilha saves
# it into the model cache itself, so both lines only confuse users.
_EXPORT_NOTICES = ("Exporting the model to", "Saving the exported ")
# Noise the legacy TorchScript exporter prints while tracing (harmless for BERT-like models).
_EXPORT_WARNING_MODULES = r"(torch|optimum|transformers)(\.|$)"


class _DropNotices(logging.Filter):
    def __init__(self, *parts: str) -> None:
        super().__init__()
        self.parts = parts

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(part in message for part in self.parts)


@contextmanager
def quiet_export_warnings() -> Iterator[None]:
    """Silence the export's ``torch_dtype`` notice, sentence-transformers' lines about the
    export it does, and tracer warnings; nothing else."""
    filters = [
        (logging.getLogger("transformers.configuration_utils"), _DropNotices(_TORCH_DTYPE_NOTICE)),
        (logging.getLogger("sentence_transformers.backend.utils"), _DropNotices(*_EXPORT_NOTICES)),
    ]
    for logger, notice in filters:
        logger.addFilter(notice)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=_EXPORT_WARNING_MODULES)
            yield
    finally:
        for logger, notice in filters:
            logger.removeFilter(notice)


def model_cache(configured: Path | None = None) -> Path:
    """The folder of model exports every workspace of this user shares: ``configured``
    (``TRILHA_MODEL_CACHE``), else ``$XDG_CACHE_HOME/trilha/models``, else
    ``~/.cache/trilha/models``."""
    if configured is not None:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "trilha" / "models"


def export_key(model: str) -> str:
    """The cache's key for ``model``: the folder it is read from (a hub id's snapshot in the
    Hugging Face cache, whose name is its revision) and that folder's weight files' sizes and
    times, so another model, another revision, another release of a packaged model or a folder
    written again (``trilha distil`` into the same ``--out``) is exported again instead of served
    from a stale export."""
    path = Path(model).expanduser()
    return _key(path.resolve() if path.exists() else _hub_snapshot(model) or path.resolve())


def older_key(model: str, *, weights: bool) -> str:
    """The key an older trilha gave ``model``'s export in a workspace's own ``models`` folder:
    the path as resolved here, and with ``weights`` (its cross-encoders') the weights' stamps."""
    path = Path(model).expanduser().resolve()
    return _key(path) if weights else hashlib.sha1(str(path).encode()).hexdigest()[:12]


def _key(path: Path) -> str:
    weights = (
        sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")) if path.is_dir() else []
    )
    stamps = [f"{w.name}:{w.stat().st_size}:{w.stat().st_mtime_ns}" for w in weights]
    return hashlib.sha1("|".join([str(path), *stamps]).encode()).hexdigest()[:12]


def _hub_snapshot(model: str) -> Path | None:
    """The Hugging Face cache's snapshot folder of the hub id ``model``, if it holds one."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    for repo in (model, f"sentence-transformers/{model}"):
        try:
            found = try_to_load_from_cache(repo, "config.json")
        except ValueError:  # not a valid repo id
            continue
        if isinstance(found, str):
            return Path(found).parent
    return None


def export_once(folder: Path, ready: Callable[[Path], bool], write: Callable[[Path], None]) -> None:
    """Make ``folder`` unless it is ``ready``: ``write`` a temporary sibling, then rename it to
    ``folder``. A reader sees no folder or a whole one; an exporter in another process (or
    thread) is waited for under a lock in ``.locks`` beside it, and its copy kept; a failure
    part-way leaves no temporary folder. A full disk is a :class:`~trilha.errors.DiskFullError`."""
    if ready(folder):
        return
    locks = folder.parent / ".locks"  # beside the exports, not among them
    try:
        locks.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # not writable, read-only, a file in the way
        raise ConfigurationError(
            f"the model cache {folder.parent} cannot be written ({e.strerror}); point "
            "TRILHA_MODEL_CACHE at a folder this user may write"
        ) from None
    with _locked(locks / f"{folder.name}.lock"):
        if ready(folder):  # another process exported it while this one waited
            return
        tmp = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", suffix=".tmp", dir=folder.parent))
        try:
            with disk_full_errors(folder):
                write(tmp)
            if folder.exists() and not ready(folder):  # left unfinished by an older trilha
                shutil.rmtree(folder)
            try:
                tmp.rename(folder)
            except OSError:  # no lock here (Windows): another exporter renamed first
                if not ready(folder):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` for the block (nothing where there is no ``fcntl``)."""
    with open(path, "a", encoding="utf-8") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield  # the lock goes with the handle


def write_atomically(folder: Path, write: Callable[[Path], None]) -> None:
    """``write`` a temporary sibling of ``folder``, then rename it over ``folder``: a failure
    part-way leaves the old folder (or none), never a half-written one, and no temporary one.
    A full disk is a :class:`~trilha.errors.DiskFullError` naming it."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with disk_full_errors(folder):
            write(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
