"""What every request passes first (plain ASGI, no per-request copies): the body limit, and
every request counted and timed by its route template (``/v1/retrieve``, never the raw path, so
callers cannot make labels without end).

The body limit holds however the body arrives: a ``Content-Length`` over ``max_body`` is refused
before anything is read; otherwise (chunked, no length, a length the sender does not keep) the
body's messages are read here, counted as they come, and refused with a 413 as soon as they pass
``max_body``, before the app (authentication included) sees anything. The messages read are
handed on to the app as they came, so nothing past the limit is ever held.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trilha.server.errors import problem
from trilha.server.metrics import ServiceMetrics


class Edge:
    """The body limit and the request metrics, around the app."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics, max_body: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500
        length = dict(scope["headers"]).get(b"content-length")
        over = length is not None and (not length.isdigit() or int(length) > self.max_body)
        body = None if over else await self._body(receive)
        if body is None:
            status = 413
            line = f"the body is over {self.max_body} bytes; send less"
            # the rest of the body is never read: the connection closes after the answer
            await problem(413, line, {"Connection": "close"})(scope, receive, send)
            self._count(scope, status, start)
            return

        async def replay() -> Message:
            return body.pop(0) if body else await receive()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, replay, sending)
        finally:
            self._count(scope, status, start)

    async def _body(self, receive: Receive) -> list[Message] | None:
        """The request's messages up to the end of its body, or None as soon as the bytes
        counted pass ``max_body`` (a disconnect ends them early; the app sees it as it would)."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages
            size += len(message.get("body", b""))
            if size > self.max_body:
                return None
            if not message.get("more_body", False):
                return messages

    def _count(self, scope: Scope, status: int, start: float) -> None:
        name = getattr(scope.get("route"), "path", None) or "unmatched"
        self.metrics.requests.labels(route=name, status=str(status)).inc()
        self.metrics.latency.labels(route=name).observe(time.perf_counter() - start)
