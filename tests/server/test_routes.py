"""Each endpoint over HTTP returns what the Python API returns for the key's principal, in the
seeds' shapes; refusals are one line with the right status."""

from __future__ import annotations

from typing import Any

from tests.server.conftest import KEYS, Service
from trilha.answer import aask


def _ids(hits: list[dict[str, Any]]) -> list[str]:
    return [h["unit"]["unit_id"] for h in hits]


def test_retrieve_is_the_python_search_for_the_keys_principal(service: Service) -> None:
    project = service.projects.resolve(service.projects.caller(None, "bruno-key-0123456789abcdef"),
                                       "acme")  # fmt: skip
    body = {"query": "budget planning VPN migration", "top_k": 8, "project_id": "acme"}
    r = service.post("/v1/retrieve", "bruno", body)
    assert r.status_code == 200, r.text
    data = r.json()
    expected = project.project.workspace.search(body["query"], top_k=8, principal=project.principal)
    assert _ids(data["hits"]) == [h.unit.unit_id for h in expected.hits]
    assert set(data) == {"hits", "cache_hit", "expansion_queries", "trace"}
    assert "bruno.ti" in data["trace"]["principal"]
    assert all({"bm25", "semantic", "fused"} <= set(h["scores"]) for h in data["hits"])


def test_the_cfo_sees_the_confidential_memo_and_it_does_not(service: Service) -> None:
    body = {"query": "Confidential memo Q3 2025 budget planning", "top_k": 10}
    by_maria = service.post("/v1/retrieve", "maria", body).json()
    by_bruno = service.post("/v1/retrieve", "bruno", body).json()
    memo = "finance/budget-memo-q3-2025"
    assert memo in {h["unit"]["doc_id"] for h in by_maria["hits"]}
    assert memo not in {h["unit"]["doc_id"] for h in by_bruno["hits"]}


def test_query_answers_in_seed_002s_shape(service: Service) -> None:
    body = {
        "project_id": "acme",
        "question": "How soon must a security incident be reported?",
        "mode": "vector",
        "params": {"k": 40, "rerank": False, "max_tokens_ctx": 2000},
    }
    r = service.post("/v1/query", "bruno", body)
    assert r.status_code == 200, r.text
    data = r.json()
    assert {"answer", "citations", "trace_id", "metrics"} <= set(data)
    assert {"latency_ms", "cost", "retrieval"} <= set(data["metrics"])
    assert data["citations"] and {"doc_id", "unit_id", "score", "lang"} <= set(data["citations"][0])
    assert data["trace"]["principal"] and "bruno.ti" in data["trace"]["principal"]


def test_every_question_door_has_the_same_length_limit(service: Service) -> None:
    long = "vpn " * 1001  # over MAX_QUESTION_CHARS, as ask, context and the CLI refuse it
    for path, field in (("/v1/query", "question"), ("/v1/context", "raw_query")):
        r = service.post(path, "bruno", {"project_id": "acme", field: long})
        assert r.status_code == 422, (path, r.text)
        assert "4000" in r.text, (path, r.text)


async def test_query_equals_the_python_answer(service: Service) -> None:
    resolved = service.projects.resolve(service.projects.caller(None, "maria-key-0123456789abcdef"),
                                        "acme")  # fmt: skip
    question = "Qual o prazo para pedir reembolso de viagem?"
    expected = await aask(resolved.project.workspace, question, principal=resolved.principal)
    data = service.post("/v1/query", "maria", {"question": question, "project_id": "acme"}).json()
    assert data["answer"] == expected.answer
    assert [c["unit_id"] for c in data["citations"]] == [c.unit_id for c in expected.citations]


def test_context_is_the_bundle_of_the_keys_user(service: Service) -> None:
    r = service.post("/v1/context", "maria", {"raw_query": "what did the board decide on budget?"})
    assert r.status_code == 200, r.text
    bundle = r.json()
    assert {"context_items", "by_memory_class", "trace"} <= set(bundle)
    assert all(item["citation"] for item in bundle["context_items"])
    refused = service.post("/v1/context", "maria", {"raw_query": "x", "user_id": "bruno.ti"})
    assert refused.status_code == 422 and "API key" in refused.json()["detail"]


def test_context_for_an_inline_principal(service: Service) -> None:
    r = service.post("/v1/context", "gina", {"raw_query": "incident report deadline"})
    assert r.status_code == 200, r.text
    cited = [i["citation"] for i in r.json()["context_items"]]
    docs = {c["doc_id"] for c in cited if c.get("doc_id")}  # conversation turns cite no doc
    assert docs and docs <= service.docs["globex"]


def test_graph_endpoints_follow_seed_003(service: Service) -> None:
    sub = service.post("/graphrag/subgraph", "maria", {"doc_id": "finance/budget-memo-q3-2025"})
    assert sub.status_code == 200, sub.text
    assert {"nodes", "edges", "constraints", "query"} <= set(sub.json())
    path = service.post("/graphrag/path", "maria", {"source_entity": "a", "target_entity": "b"})
    assert path.status_code == 200 and set(path.json()) >= {"path", "edges", "meta"}
    top = service.post("/graphrag/topn", "maria", {"entity_names": ["Atlas"], "limit": 3})
    assert top.status_code == 200 and "items" in top.json()
    no_graph = service.post("/graphrag/topn", "gina", {"entity_names": ["x"]})
    assert no_graph.status_code == 409 and "graph" in no_graph.json()["detail"].lower()


def test_dual_and_feature_search(service: Service) -> None:
    dual = service.post(
        "/v1/factual/dual-search", "maria", {"facts": "voo atrasado", "thesis": "dano moral"}
    )
    assert dual.status_code == 200 and "counts" in dual.json()
    feats = service.post("/v1/search/features", "maria", {"unanimidade": True, "limit": 5})
    assert feats.status_code == 200 and set(feats.json()) == {"documents", "total"}


def test_jobs_stats_are_for_operators(service: Service) -> None:
    headers = {"X-API-Key": "maria-key-0123456789abcdef"}
    assert service.client.get("/v1/jobs/stats", headers=headers).status_code == 200
    headers = {"X-API-Key": "bruno-key-0123456789abcdef"}
    assert service.client.get("/v1/jobs/stats", headers=headers).status_code == 403


def test_health_and_metrics(service: Service) -> None:
    service.post("/v1/retrieve", "bruno", {"query": "VPN"})
    health = service.client.get("/healthz", headers={"X-API-Key": KEYS["maria"]})  # operator
    assert health.status_code == 200
    report = health.json()
    assert report["status"] == "ok" and report["projects"]["acme"]["graph"].startswith("up")
    text = service.client.get("/metrics").text
    assert 'trilha_requests_total{route="/v1/retrieve",status="200"}' in text
    assert 'trilha_stage_seconds_count{stage="bm25"}' in text
    assert "trilha_cache_lookups_total" in text
