"""Bodies are read as JSON types, not coerced: ``true`` or ``"5"`` is no integer, ``"yes"`` no
boolean, and an agent type is one the project defines. Each refusal is a 422 of one line."""

from __future__ import annotations

import pytest

from tests.server.conftest import Service

REFUSED = [
    ("/v1/retrieve", {"query": "budget", "top_k": True}, "top_k"),
    ("/v1/retrieve", {"query": "budget", "top_k": "5"}, "top_k"),
    ("/v1/retrieve", {"query": "budget", "top_k": 5.0}, "top_k"),
    ("/v1/retrieve", {"query": "budget", "rerank": "yes"}, "rerank"),
    ("/v1/retrieve", {"query": "budget", "include_kg": 1}, "include_kg"),
    ("/v1/search/features", {"unanimidade": "yes"}, "unanimidade"),
    ("/v1/search/features", {"limit": "5"}, "limit"),
    ("/v1/factual/dual-search", {"facts": "a", "thesis": "b", "top_k": "3"}, "top_k"),
    ("/v1/query", {"question": "budget?", "params": {"k": "40"}}, "params.k"),
    ("/v1/query", {"question": "budget?", "params": {"rerank": "true"}}, "params.rerank"),
    ("/v1/context", {"raw_query": "budget", "max_tokens": "100"}, "max_tokens"),
    ("/graphrag/topn", {"entity_names": ["Atlas"], "limit": True}, "limit"),
    ("/graphrag/path", {"source_entity": "a", "target_entity": "b", "max_length": "2"}, "max_"),
    ("/graphrag/subgraph", {"doc_id": "x", "max_hops": True}, "max_hops"),
]


@pytest.mark.parametrize("path,body,field", REFUSED, ids=[f"{p} {f}" for p, _, f in REFUSED])
def test_loose_values_are_refused_in_one_line(
    service: Service, path: str, body: dict[str, object], field: str
) -> None:
    r = service.post(path, "maria", body)
    assert r.status_code == 422, (body, r.text)
    detail = r.json()["detail"]
    assert detail.startswith(field) and "\n" not in detail, detail


def test_an_unknown_agent_type_is_refused_naming_the_known_ones(service: Service) -> None:
    r = service.post("/v1/context", "maria", {"raw_query": "budget", "agent_type": "nosuch"})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail.startswith("agent_type") and "knowledge" in detail and "task" in detail
    ok = service.post("/v1/context", "maria", {"raw_query": "budget", "agent_type": "task"})
    assert ok.status_code == 200, ok.text


def test_a_loose_filter_value_is_refused(service: Service) -> None:
    body = {"query": "budget", "filters": {"max_sensitivity": True}}
    r = service.post("/v1/retrieve", "maria", body)
    assert r.status_code in (400, 422), r.text
    assert "max_sensitivity" in r.json()["detail"] and "\n" not in r.json()["detail"]


def test_json_integers_and_booleans_still_pass(service: Service) -> None:
    r = service.post("/v1/retrieve", "maria", {"query": "budget", "top_k": 3, "rerank": False})
    assert r.status_code == 200 and len(r.json()["hits"]) <= 3
    feats = service.post("/v1/search/features", "maria", {"unanimidade": False, "limit": 2})
    assert feats.status_code == 200, feats.text
