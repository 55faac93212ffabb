"""Remote encoder and reranker over HTTP, speaking text-embeddings-inference's protocol.

`TEI <https://github.com/huggingface/text-embeddings-inference>`_ serves ``POST /embed``
(``{"inputs": [...], "normalize": true, "truncate": true}`` → one vector per input) and
``POST /rerank`` (``{"query": ..., "texts": [...], "truncate": true}`` → ``[{"index", "score"}]``),
and ``GET /info`` (``model_id``). :class:`TEIClient` posts in batches, with a timeout per
request and retries with exponential backoff on connection errors, timeouts, 429 and 5xx; what
still fails is one :class:`~trilha.errors.BackendUnavailableError` line naming the URL. A search
whose encoder is down goes on with BM25 alone, and one whose reranker is down keeps the fused
order; both say so in the trace.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from trilha.errors import BackendUnavailableError, ConfigurationError
from trilha.rerank.base import apply_scores
from trilha.types import Hit

_RETRIED = {429, 500, 502, 503, 504}


class TEIClient:
    """Posts JSON to a TEI server: ``timeout_s`` per request, ``retries`` more tries."""

    def __init__(self, url: str, timeout_s: float = 5.0, retries: int = 2) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"{url!r} is not an http(s) URL of a TEI server")
        self.url = url.rstrip("/")
        self.retries = retries
        self._http = httpx.Client(timeout=timeout_s)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """The JSON answer of ``POST path``; :class:`BackendUnavailableError` once retries are
        spent."""
        return self._call("POST", path, body)

    def get(self, path: str) -> Any:
        """The JSON answer of ``GET path``."""
        return self._call("GET", path, None)

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(0.05 * 2**attempt)
            try:
                response = self._http.request(method, self.url + path, json=body)
            except httpx.HTTPError as e:
                problem = f"{type(e).__name__}: {e}".splitlines()[0]
                continue
            if response.status_code in _RETRIED:
                problem = f"HTTP {response.status_code}"
                continue
            if response.status_code >= 400:
                raise BackendUnavailableError(
                    f"{self.url}{path} refused the request (HTTP {response.status_code}: "
                    f"{response.text[:200]})"
                )
            return response.json()
        raise BackendUnavailableError(
            f"{self.url}{path} did not answer after {self.retries + 1} tries ({problem})"
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()


def _batches(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class TEIEmbedder:
    """An :class:`~trilha.encode.base.Embedder` whose vectors come from a TEI server's
    ``/embed``; ``query_prompt`` / ``passage_prompt`` are prepended as with local models."""

    def __init__(
        self,
        client: TEIClient,
        model: str | None,
        dimension: int,
        batch_size: int = 32,
        query_prompt: str | None = None,
        passage_prompt: str | None = None,
    ) -> None:
        self.client = client
        self._model = model
        self._dimension = dimension
        self.batch_size = batch_size
        self.query_prompt, self.passage_prompt = query_prompt or "", passage_prompt or ""

    @property
    def model_id(self) -> str:
        """``tei:<model>``: the configured name, else the server's ``/info`` ``model_id``."""
        if self._model is None:
            info = self.client.get("/info")
            self._model = str(info.get("model_id", "unknown")) if isinstance(info, dict) else "?"
        return f"tei:{self._model}"

    @property
    def dimension(self) -> int:
        """Vector size (``TRILHA_EMBEDDING_DIMENSION``; checked on every answer)."""
        return self._dimension

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Query vectors, L2-normalised."""
        return self._embed([self.query_prompt + t for t in texts])

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Passage vectors, L2-normalised."""
        return self._embed([self.passage_prompt + t for t in texts])

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        rows: list[list[float]] = []
        for batch in _batches(texts, self.batch_size):
            body = {"inputs": list(batch), "normalize": True, "truncate": True}
            answer = self.client.post("/embed", body)
            if not isinstance(answer, list) or len(answer) != len(batch):
                raise BackendUnavailableError(f"{self.client.url}/embed gave no vector per input")
            rows.extend(answer)
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if out.shape[1] != self._dimension and texts:
            raise ConfigurationError(
                f"{self.client.url} makes {out.shape[1]}-d vectors; set "
                f"TRILHA_EMBEDDING_DIMENSION={out.shape[1]}"
            )
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class TEIReranker:
    """A :class:`~trilha.rerank.base.Reranker` scoring pairs with a TEI server's ``/rerank``."""

    def __init__(self, client: TEIClient, top_n: int = 12, batch_size: int = 32) -> None:
        self.client = client
        self.top_n = top_n
        self.batch_size = batch_size

    def score(
        self, query: str, passages: Sequence[str], max_length: int | None = None
    ) -> list[float]:
        """One score per passage (the server's, higher is better). The server cuts pairs at
        its own limit (``truncate``); TEI takes no per-call length, so ``max_length`` is not
        sent."""
        scores: list[float] = []
        for batch in _batches(passages, self.batch_size):
            body = {"query": query, "texts": list(batch), "truncate": True, "raw_scores": False}
            answer = self.client.post("/rerank", body)
            try:
                by_index = {int(item["index"]): float(item["score"]) for item in answer}
                scores.extend(by_index[i] for i in range(len(batch)))
            except (TypeError, KeyError, ValueError) as e:
                raise BackendUnavailableError(
                    f"{self.client.url}/rerank gave no score per text ({e})"
                ) from None
        return scores

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int | None = None) -> list[Hit]:
        """Hits ordered by the server's scores, the best ``top_n`` kept."""
        scores = self.score(query, [h.unit.text for h in hits])
        return apply_scores(hits, scores, top_n or self.top_n)
