"""The part the test servers share: an HTTP server on 127.0.0.1 in a daemon thread, started and
stopped by a ``with`` block, on a free port unless one is named; and :func:`free_port`, for the
servers started in a process of their own."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on now, on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet request handler that reads and writes JSON bodies."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_json(self) -> Any:
        """The request's JSON body (None when it has none)."""
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else None

    def reply_json(self, status: int, payload: Any) -> None:
        """Answer ``payload`` as JSON with ``status``."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class LoopbackServer:
    """Serves :meth:`handler`'s requests while in a ``with`` block; :attr:`url` reaches it."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._server: ThreadingHTTPServer | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class (subclasses answer their protocol in it)."""
        raise NotImplementedError

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, the root of the server."""
        if self._server is None:
            raise RuntimeError("the server is not started: use it in a with block")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
