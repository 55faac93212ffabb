"""A local stand-in for Groq's OpenAI-compatible chat completions API, for tests.

``POST /openai/v1/chat/completions`` (the path the ``groq`` client posts to under its
``base_url``; an OpenAI-style client posts there too with ``base_url`` ``…/openai/v1``) answers
what a scripted ``responder`` decides from the request's JSON: text content, tool calls with a
``finish_reason``, a delay (to test timeouts) or an HTTP error. Streaming requests
(``"stream": true``) get the same answer as server-sent chunks. Every request body is kept in
:attr:`GroqTestServer.requests`. Loopback only, on a free port::

    with GroqTestServer(lambda request: Reply(content='{"retrieval_intent": "factual"}')) as s:
        client = groq.Groq(api_key="test", base_url=s.base_url)
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: The chat completions path under the server root.
COMPLETIONS_PATH = "/openai/v1/chat/completions"


@dataclass(frozen=True)
class ToolCall:
    """A function call the model asks for; ``arguments`` is JSON text or a mapping."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def wire(self, index: int) -> dict[str, Any]:
        """The call as the API spells it."""
        args = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)
        return {
            "id": self.id or f"call_{index}",
            "type": "function",
            "function": {"name": self.name, "arguments": args},
        }


@dataclass(frozen=True)
class Reply:
    """What the server answers to one request."""

    content: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    finish_reason: str | None = None
    status: int = 200
    delay_s: float = 0.0
    body: Mapping[str, Any] | None = None
    #: (prompt_tokens, completion_tokens) reported in ``usage``.
    usage: tuple[int, int] = (1, 1)

    def completion(self, model: str, number: int) -> dict[str, Any]:
        """The ``chat.completion`` body (``body`` as given when set)."""
        if self.body is not None:
            return dict(self.body)
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [c.wire(i) for i, c in enumerate(self.tool_calls)]
        return {
            "id": f"chatcmpl-test-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.reason}],
            "usage": {
                "prompt_tokens": self.usage[0],
                "completion_tokens": self.usage[1],
                "total_tokens": sum(self.usage),
            },
        }

    @property
    def reason(self) -> str:
        """``finish_reason``: as given, else ``tool_calls`` when there are calls, else ``stop``."""
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")

    def chunks(self, model: str, number: int) -> Iterator[dict[str, Any]]:
        """The reply as ``chat.completion.chunk`` objects, for a streaming request."""
        head = {"id": f"chatcmpl-test-{number}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": model}  # fmt: skip
        delta: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        yield {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        for i, call in enumerate(self.tool_calls):
            wired = {"index": i, **call.wire(i)}
            delta = {"tool_calls": [wired]}
            yield {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        yield {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": self.reason}]}


Responder = Callable[[dict[str, Any]], Reply]


def json_reply(payload: Any) -> Reply:
    """A reply whose content is ``payload`` as JSON (what ``response_format`` json asks for)."""
    return Reply(content=json.dumps(payload))


class GroqTestServer:
    """A thread serving chat completions on ``127.0.0.1``; use it as a context manager."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder: Responder = responder or (lambda request: Reply(content="{}"))
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The root to give ``groq.Groq(base_url=...)``."""
        if self._server is None:
            raise RuntimeError("the server is not started: use it in a with block")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """The root to give an OpenAI-style client (``…/openai/v1``)."""
        return f"{self.base_url}/openai/v1"

    def start(self) -> GroqTestServer:
        """Listen on a free loopback port, serving from a daemon thread."""
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket. Idempotent."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> GroqTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, request: dict[str, Any]) -> tuple[Reply, int]:
        """Record ``request`` and ask the responder; returns the reply and the request's number."""
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
        return self.responder(request), number


class _Server(ThreadingHTTPServer):
    """The HTTP server, knowing the :class:`GroqTestServer` that scripts it."""

    daemon_threads = True

    def __init__(self, owner: GroqTestServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != COMPLETIONS_PATH:
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return self._send(400, {"error": {"message": "the body is not JSON"}})
        reply, number = self.server.owner.answer(request)
        time.sleep(reply.delay_s)
        if reply.status != 200:
            error = {"message": reply.content or "scripted error", "type": "server_error"}
            return self._send(reply.status, {"error": error})
        model = str(request.get("model", "test-model"))
        if request.get("stream"):
            return self._stream(reply.chunks(model, number))
        return self._send(200, reply.completion(model, number))

    def _send(self, status: int, payload: Mapping[str, Any]) -> None:
        self._write(status, "application/json", json.dumps(payload).encode())

    def _stream(self, chunks: Iterator[dict[str, Any]]) -> None:
        events = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
        self._write(200, "text/event-stream", "".join(events).encode())

    def _write(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
            self.wfile.write(data)
