"""A local server speaking text-embeddings-inference's protocol, for tests and benchmarks.

``POST /embed`` answers one vector per input from ``embed`` (a function of the texts),
``POST /rerank`` one ``{"index", "score"}`` per text from ``rerank`` (a function of the query
and texts), ``GET /info`` the ``model_id``. ``fail_next`` makes the next N requests answer 503
(to test retries), ``delay_s`` delays every answer (to test timeouts). Every request body is
kept in :attr:`TEITestServer.requests`. Loopback only, on a free port::

    with TEITestServer(embed=lambda texts: [[1.0, 0.0]] * len(texts)) as tei:
        client = TEIClient(tei.url)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

from trilha.testing.loopback import JsonHandler, LoopbackServer

EmbedFn = Callable[[Sequence[str]], Sequence[Sequence[float]]]
RerankFn = Callable[[str, Sequence[str]], Sequence[float]]


def _overlap(query: str, texts: Sequence[str]) -> list[float]:
    words = set(query.lower().split())
    return [len(words & set(t.lower().split())) / (1 + len(words)) for t in texts]


class TEITestServer(LoopbackServer):
    """A thread serving TEI's ``/embed``, ``/rerank`` and ``/info``; a context manager."""

    def __init__(
        self,
        embed: EmbedFn | None = None,
        rerank: RerankFn | None = None,
        model_id: str = "test/tei-model",
    ) -> None:
        super().__init__()
        self.embed = embed or (lambda texts: [[1.0, 0.0, 0.0]] * len(texts))
        self.rerank: RerankFn = rerank or _overlap
        self.model_id = model_id
        self.requests: list[tuple[str, Any]] = []
        self.fail_next = 0
        self.delay_s = 0.0
        self._lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Answers through :meth:`answer`."""
        return _handler(self)

    def answer(self, path: str, body: Any) -> tuple[int, Any]:
        """The status and JSON answer of one request (recorded first)."""
        with self._lock:
            self.requests.append((path, body))
            failing = self.fail_next > 0
            self.fail_next -= failing
        if self.delay_s:
            time.sleep(self.delay_s)
        if failing:
            return 503, {"error": "overloaded"}
        if path == "/info":
            return 200, {"model_id": self.model_id}
        if path == "/embed":
            return 200, [list(map(float, v)) for v in self.embed(list(body["inputs"]))]
        if path == "/rerank":
            scores = self.rerank(body["query"], list(body["texts"]))
            ranked = sorted(enumerate(scores), key=lambda p: -p[1])
            return 200, [{"index": i, "score": float(s)} for i, s in ranked]
        return 404, {"error": f"no route {path}"}


def _handler(owner: TEITestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:
            self.reply_json(*owner.answer(self.path, None))

        def do_POST(self) -> None:
            self.reply_json(*owner.answer(self.path, self.read_json()))

    return Handler
