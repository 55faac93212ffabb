"""The 1 MiB body limit over real HTTP: raw requests on a socket to a uvicorn server, with the
body sent chunked (no length), or under a ``Content-Length`` it does not keep, with and without
a key on a service that refuses keyless calls. Every byte uvicorn hands the app is counted."""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import uvicorn
from starlette.types import Message, Receive, Scope, Send

from trilha.access.principal import Principal
from trilha.server import Projects, ServiceConfig, create_app
from trilha.server.app import MAX_BODY_BYTES
from trilha.server.config import KeyEntry, ProjectEntry
from trilha.testing.loopback import free_port
from trilha.workspace import Workspace

KEY = "edge-key-0123456789abcdef"
#: What uvicorn may hand over in one message past the limit (its 64 KiB high-water mark plus
#: one socket read of 256 KiB): the most the app may read of a body it refuses.
ONE_MESSAGE = 64 * 1024 + 256 * 1024
FRAME = 16 * 1024


@dataclass
class Served:
    """The port of a service that refuses keyless calls, and the body bytes of each request."""

    port: int
    received: list[int] = field(default_factory=list)


@pytest.fixture(scope="module")
def served(globex_ws: Workspace) -> Iterator[Served]:
    config = ServiceConfig(
        projects={"globex": ProjectEntry(workspace=Path("globex"), tenant="globex")},
        keys=[KeyEntry(key=KEY, tenant="globex", principal=Principal(user_id="gina"))],
    )
    app = create_app(Projects.over(config, {"globex": globex_ws}))
    state = Served(free_port())

    async def counting(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        state.received.append(0)
        index = len(state.received) - 1

        async def counted() -> Message:
            message = await receive()
            state.received[index] += len(message.get("body", b""))
            return message

        await app(scope, counted, send)

    server = uvicorn.Server(
        uvicorn.Config(counting, host="127.0.0.1", port=state.port, http="h11", log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield state
    server.should_exit = True
    thread.join(10)


def _post(
    port: int, body: bytes, headers: dict[str, str], *, chunked: bool = True
) -> tuple[int, str]:
    """POST /v1/retrieve with ``body`` (chunked, in 16 KiB frames, unless ``chunked`` is
    False); stops sending as soon as the server answers or closes. The status and the detail
    ("" for a 2xx)."""
    head = "POST /v1/retrieve HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode("ascii"))
        try:
            for at in range(0, len(body), FRAME):
                if select.select([sock], [], [], 0)[0]:
                    break  # answered (or closed) before the whole body was sent
                piece = body[at : at + FRAME]
                frame = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
                sock.sendall(frame)
            else:
                if chunked:
                    sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server closed the connection after its answer
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, str(json.loads(response.read()).get("detail", ""))


def _big(size: int) -> bytes:
    return b'{"query": "' + b"a" * size + b'"}'


@pytest.mark.parametrize("who", ["key", "no key"])
def test_a_chunked_body_over_the_limit_is_refused_unread(served: Served, who: str) -> None:
    headers = {"X-API-Key": KEY} if who == "key" else {}
    status, detail = _post(served.port, _big(8 * MAX_BODY_BYTES), headers)
    assert (status, detail) == (413, f"the body is over {MAX_BODY_BYTES} bytes; send less")
    assert served.received[-1] <= MAX_BODY_BYTES + ONE_MESSAGE


def test_a_body_that_breaks_its_content_length_is_counted(served: Served) -> None:
    # Transfer-Encoding beats Content-Length: the small length is a lie about what follows
    lying = {"X-API-Key": KEY, "Content-Length": "100"}
    status, _ = _post(served.port, _big(3 * MAX_BODY_BYTES), lying)
    assert status == 413
    assert served.received[-1] <= MAX_BODY_BYTES + ONE_MESSAGE
    # a length kept short: the server reads that many bytes, never what follows
    status, _ = _post(served.port, _big(3 * MAX_BODY_BYTES), lying, chunked=False)
    assert status == 422 and served.received[-1] <= 100


def test_a_chunked_body_within_the_limit_is_served(served: Served) -> None:
    body = json.dumps({"query": "b" * 1000, "top_k": 1}).encode()
    assert _post(served.port, body, {"X-API-Key": KEY})[0] == 200
    status, detail = _post(served.port, body, {})
    assert status == 401 and "API key" in detail
    assert served.received[-1] == len(body)
