"""Helpers for the one-off ONNX export of a model (the only step that needs torch and optimum)."""

from __future__ import annotations

import logging
import shutil
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from trilha.diskspace import disk_full_errors

# optimum's exporter passes ``torch_dtype`` to transformers, which renamed it ``dtype`` and logs a
# deprecation on every export; trilha passes no dtype, so the line only confuses users.
_TORCH_DTYPE_NOTICE = "`torch_dtype` is deprecated"
# Noise the legacy TorchScript exporter prints while tracing (harmless for BERT-like models).
_EXPORT_WARNING_MODULES = r"(torch|optimum|transformers)(\.|$)"


class _DropTorchDtypeNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(_TORCH_DTYPE_NOTICE)


@contextmanager
def quiet_export_warnings() -> Iterator[None]:
    """Silence the export's ``torch_dtype`` notice and tracer warnings; nothing else."""
    logger = logging.getLogger("transformers.configuration_utils")
    notice = _DropTorchDtypeNotice()
    logger.addFilter(notice)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=_EXPORT_WARNING_MODULES)
            yield
    finally:
        logger.removeFilter(notice)


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


def save_atomically(model: Any, folder: Path) -> None:
    """``model.save_pretrained`` into ``folder`` through :func:`write_atomically`."""
    write_atomically(folder, lambda tmp: model.save_pretrained(str(tmp)))
