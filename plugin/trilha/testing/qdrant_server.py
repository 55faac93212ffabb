"""A local server speaking the part of Qdrant's REST API that trilha uses, for tests and demos.

No Qdrant server can be installed on the machines trilha is tested on, yet several service
processes share one corpus only through a server (``TRILHA_QDRANT_URL``). This stands in for
one: it answers Qdrant's REST routes (collections, payload indices, upsert, delete, retrieve,
scroll, count, query) with qdrant-client's own engine (local mode, in memory or in a folder)
behind them, so trilha's server code path runs for real through qdrant-client's REST client,
from as many processes as connect. It is not a Qdrant: one process, one lock, exact search,
payload indices accepted and ignored. Loopback only, on a free port::

    with QdrantTestServer() as qdrant:
        settings = TrilhaSettings(qdrant_url=qdrant.url)

``python -m trilha.testing.qdrant_server --port 6333 [--path DIR]`` runs one in the foreground.
"""

from __future__ import annotations

import argparse
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from importlib.metadata import version
from typing import Any, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, TypeAdapter
from qdrant_client import QdrantClient
from qdrant_client.http import models

from trilha.testing.loopback import JsonHandler, LoopbackServer

Route = Callable[[QdrantClient, str, Any], Any]


def _dump(value: Any) -> Any:
    """A model (or a list of them) as JSON-ready data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _update(_: Any) -> dict[str, Any]:
    return {"operation_id": 0, "status": "completed"}


def _create(client: QdrantClient, name: str, body: Any) -> bool:
    req = models.CreateCollection.model_validate(body or {})
    return bool(
        client.create_collection(
            name, vectors_config=req.vectors or {}, sparse_vectors_config=req.sparse_vectors
        )
    )


def _upsert(client: QdrantClient, name: str, body: Any) -> dict[str, Any]:
    if "batch" in body:
        points: Any = models.Batch.model_validate(body["batch"])
    else:
        points = [models.PointStruct.model_validate(p) for p in body["points"]]
    return _update(client.upsert(name, points=points))


def _delete(client: QdrantClient, name: str, body: Any) -> dict[str, Any]:
    selector: Any
    if "filter" in body:
        selector = models.FilterSelector.model_validate(body)
    else:
        selector = models.PointIdsList.model_validate(body)
    return _update(client.delete(name, points_selector=selector))


def _scroll(client: QdrantClient, name: str, body: Any) -> dict[str, Any]:
    req = models.ScrollRequest.model_validate(body or {})
    records, next_offset = client.scroll(
        name,
        scroll_filter=req.filter,
        limit=req.limit or 10,
        offset=req.offset,
        with_payload=True if req.with_payload is None else req.with_payload,
        with_vectors=bool(req.with_vector) if req.with_vector is not None else False,
    )
    return {"points": _dump(records), "next_page_offset": next_offset}


def _retrieve(client: QdrantClient, name: str, body: Any) -> Any:
    req = models.PointRequest.model_validate(body)
    with_vectors = req.with_vector if req.with_vector is not None else False
    return _dump(
        client.retrieve(
            name,
            req.ids,
            with_payload=True if req.with_payload is None else req.with_payload,
            with_vectors=with_vectors,  # type: ignore[arg-type]
        )
    )


def _query(client: QdrantClient, name: str, body: Any) -> Any:
    req = models.QueryRequest.model_validate(body)
    query: Any = req.query
    if isinstance(query, models.NearestQuery):
        query = query.nearest
    return _dump(
        client.query_points(
            name,
            query=query,
            using=req.using,
            query_filter=req.filter,
            limit=req.limit or 10,
            offset=req.offset,
            with_payload=True if req.with_payload is None else req.with_payload,
            with_vectors=req.with_vector if req.with_vector is not None else False,
            score_threshold=req.score_threshold,
        )
    )


def _count(client: QdrantClient, name: str, body: Any) -> Any:
    req = models.CountRequest.model_validate(body or {})
    return _dump(client.count(name, count_filter=req.filter, exact=True))


#: (method, path pattern) -> what answers it; ``name`` is the collection.
ROUTES: dict[tuple[str, str], Route] = {
    ("GET", r"/collections/(?P<name>[^/]+)/exists"): lambda c, n, b: {
        "exists": c.collection_exists(n)
    },
    ("GET", r"/collections/(?P<name>[^/]+)"): lambda c, n, b: _dump(c.get_collection(n)),
    ("PUT", r"/collections/(?P<name>[^/]+)"): _create,
    ("DELETE", r"/collections/(?P<name>[^/]+)"): lambda c, n, b: c.delete_collection(n),
    ("PUT", r"/collections/(?P<name>[^/]+)/index"): lambda c, n, b: _update(None),
    ("PUT", r"/collections/(?P<name>[^/]+)/points"): _upsert,
    ("POST", r"/collections/(?P<name>[^/]+)/points/delete"): _delete,
    ("POST", r"/collections/(?P<name>[^/]+)/points/scroll"): _scroll,
    ("POST", r"/collections/(?P<name>[^/]+)/points/query"): _query,
    ("POST", r"/collections/(?P<name>[^/]+)/points/count"): _count,
    ("POST", r"/collections/(?P<name>[^/]+)/points"): _retrieve,
}
_COMPILED = [
    (method, re.compile(pattern + "$"), route) for (method, pattern), route in ROUTES.items()
]
_JSON = TypeAdapter(Any)


class QdrantTestServer(LoopbackServer):
    """A thread serving Qdrant's REST routes over a local-mode engine; a context manager.

    ``path`` keeps the points in that folder (None: in memory). ``down`` makes every request
    answer 503 (a server that is unreachable), ``requests`` counts the requests answered."""

    def __init__(self, path: str | None = None, port: int = 0) -> None:
        super().__init__(port)
        self.path = path
        self.down = False
        self.requests = 0
        self._lock = threading.Lock()
        self._client: QdrantClient | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Answers through :meth:`answer`."""
        return _handler(self)

    def __enter__(self) -> Self:
        self._client = QdrantClient(path=self.path) if self.path else QdrantClient(":memory:")
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        if self._client is not None:
            self._client.close()
            self._client = None

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """The status and JSON answer of one request."""
        if self.down:
            return 503, {"status": {"error": "service unavailable"}}
        route = urlsplit(path).path.rstrip("/") or "/"
        if method == "GET" and route == "/":
            return 200, {
                "title": "qdrant stand-in (trilha.testing)",
                "version": version("qdrant-client"),
            }
        for verb, pattern, answer in _COMPILED:
            match = pattern.match(route)
            if verb == method and match:
                return self._call(answer, match["name"], body)
        return 404, {"status": {"error": f"no route {method} {route}"}}

    def _call(self, answer: Route, name: str, body: Any) -> tuple[int, Any]:
        with self._lock:
            self.requests += 1
            assert self._client is not None
            try:
                result = answer(self._client, name, body)
            except (ValueError, KeyError) as e:
                status = 404 if "not found" in str(e) else 400
                return status, {"status": {"error": str(e)}}
        return 200, {"result": _JSON.dump_python(result, mode="json"), "status": "ok", "time": 0.0}


def _handler(owner: QdrantTestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            self.reply_json(*owner.answer(self.command, self.path, self.read_json()))

        do_GET = do_PUT = do_POST = do_DELETE = _serve

    return Handler


def main(argv: list[str] | None = None) -> None:
    """Serve in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=6333)
    parser.add_argument("--path", help="folder to keep the points in (default: memory)")
    args = parser.parse_args(argv)
    with QdrantTestServer(args.path, args.port) as server:
        print(f"Qdrant stand-in on {server.url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover - run by hand
    main()
