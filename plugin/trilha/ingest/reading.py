"""Reading one file as text, refusing in one line what is not UTF-8 text in a regular file."""

from __future__ import annotations

import codecs
from pathlib import Path

from trilha.errors import BadRequestError

#: Bytes read first to tell a binary file (NUL bytes) from text.
_SNIFF = 8192


def read_text(path: Path) -> str:
    """A file's text; :class:`BadRequestError` for binary or non-UTF-8 files, links to nothing,
    pipes and other things that are not regular files, and files that cannot be opened."""
    if not path.is_file():  # follows links: a dangling one, a pipe, a socket, a device
        what = "a link to nothing" if path.is_symlink() and not path.exists() else "not a file"
        raise BadRequestError(f"{path}: {what}; only regular files are ingested, remove it")
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF)
            if b"\x00" in head:
                raise BadRequestError(
                    f"{path}: binary file (NUL bytes); only UTF-8 text is ingested"
                )
            data = head + fh.read()
    except OSError as e:
        reason = f"cannot be read ({e.strerror}); check its permissions"
        raise BadRequestError(f"{path}: {reason}") from e
    if data.startswith(codecs.BOM_UTF8):  # a BOM would hide the front matter
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BadRequestError(
            f"{path}: not UTF-8 (byte {data[e.start]:#04x} on line {line}); convert it, "
            "e.g. iconv -f latin1 -t utf-8"
        ) from e
