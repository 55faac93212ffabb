"""What every request passes first (plain ASGI, no per-request copies): a body over
``max_body`` bytes is refused with a 413 before it is read, and every request is counted and
timed by its route template (``/v1/retrieve``, never the raw path, so callers cannot make
labels without end)."""

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
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            status = 413
            await problem(413, f"the body is over {self.max_body} bytes; send less")(
                scope, receive, send
            )
            self._count(scope, status, start)
            return

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self._count(scope, status, start)

    def _count(self, scope: Scope, status: int, start: float) -> None:
        name = getattr(scope.get("route"), "path", None) or "unmatched"
        self.metrics.requests.labels(route=name, status=str(status)).inc()
        self.metrics.latency.labels(route=name).observe(time.perf_counter() - start)
