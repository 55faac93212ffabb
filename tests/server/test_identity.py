"""Who calls comes from the API key only; another tenant's project is answered as if it did not
exist; and over many random calls no response carries a unit the key may not read."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.conftest import KEYS, Service
from trilha.access.policy import Access, visible


def test_a_call_without_a_key_is_refused(service: Service) -> None:
    r = service.post("/v1/retrieve", None, {"query": "budget"})
    assert r.status_code == 401 and r.headers["WWW-Authenticate"] == "Bearer"
    assert "API key" in r.json()["detail"]


def test_bearer_and_header_keys_are_accepted_and_bad_ones_refused(service: Service) -> None:
    body = {"query": "budget"}
    ok = service.client.post("/v1/retrieve", json=body,
                             headers={"Authorization": f"Bearer {KEYS['bruno']}"})  # fmt: skip
    assert ok.status_code == 200
    for headers in ({"Authorization": "Basic abc"}, {"X-API-Key": "not-a-key"},
                    {"Authorization": "Bearer "}):  # fmt: skip
        r = service.client.post("/v1/retrieve", json=body, headers=headers)
        assert r.status_code == 401, (headers, r.text)
        assert r.json()["detail"] and "Traceback" not in r.text


def test_the_body_cannot_name_the_caller(service: Service) -> None:
    for field, value in (("principal", {"clearance": 9}), ("user_id", "maria.cfo"),
                         ("tenant", "acme")):  # fmt: skip
        r = service.post("/v1/retrieve", "bruno", {"query": "budget", field: value})
        assert r.status_code == 422
        assert r.json()["detail"].startswith(f"{field}: the caller comes from the API key")


def test_another_tenants_project_is_answered_like_a_missing_one(service: Service) -> None:
    theirs = service.post("/v1/retrieve", "gina", {"query": "budget", "project_id": "acme"})
    missing = service.post("/v1/retrieve", "gina", {"query": "budget", "project_id": "nope"})
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["detail"].replace("acme", "X") == missing.json()["detail"].replace(
        "nope", "X"
    )


def test_a_key_with_one_project_needs_no_project_id(service: Service) -> None:
    r = service.post("/v1/retrieve", "gina", {"query": "incident report"})
    assert r.status_code == 200
    assert {h["unit"]["doc_id"] for h in r.json()["hits"]} <= service.docs["globex"]


WORDS = "budget VPN incident prazo dados reembolso Atlas memo férias dano moral policy vendor "
WORDS += "security remote confidential nota"
CALLS = ["/v1/retrieve", "/v1/query", "/v1/factual/dual-search", "/v1/search/features",
         "/graphrag/topn"]  # fmt: skip


def _body(path: str, text: str, project: str | None) -> dict[str, Any]:
    bodies: dict[str, dict[str, Any]] = {
        "/v1/retrieve": {"query": text, "top_k": 20},
        "/v1/query": {"question": text},
        "/v1/factual/dual-search": {"facts": text, "thesis": text[::-1] or "x"},
        "/v1/search/features": {},
        "/graphrag/topn": {"entity_names": text.split(), "limit": 20},
    }
    return {**bodies[path], **({"project_id": project} if project else {})}


def _doc_ids(data: Any) -> set[str]:
    """Every doc_id anywhere in a response."""
    if isinstance(data, dict):
        found = {data["doc_id"]} if isinstance(data.get("doc_id"), str) else set()
        return found.union(*(_doc_ids(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(_doc_ids(v) for v in data))
    return set()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    who=st.sampled_from(sorted(KEYS)),
    path=st.sampled_from(CALLS),
    words=st.lists(st.sampled_from(WORDS.split()), min_size=1, max_size=4),
    project=st.sampled_from([None, "acme", "globex"]),
)
def test_no_response_carries_a_unit_the_key_may_not_read(
    service: Service, who: str, path: str, words: list[str], project: str | None
) -> None:
    r = service.post(path, who, _body(path, " ".join(words), project))
    assert r.status_code < 500, r.text
    if r.status_code != 200:
        return
    resolved = service.projects.resolve(service.projects.caller(None, KEYS[who]), project)
    mine = service.docs[resolved.project.project_id]
    assert resolved.project.tenant == ("globex" if who == "gina" else "acme")
    leaked = _doc_ids(r.json()) - mine
    assert not leaked, f"{who} read {leaked} through {path}"
    units = {u.unit_id: u for u in resolved.project.workspace.searcher.lexical.units}
    for hit in r.json().get("hits", []):
        unit = units[hit["unit"]["unit_id"]]
        access = Access.model_validate(unit.model_dump(include=set(Access.model_fields)))
        assert visible(access, resolved.principal), f"{who} saw {unit.unit_id}"


def test_a_body_over_the_limit_is_refused_before_it_is_read(service: Service) -> None:
    big = {"query": "x" * 2_000_000}
    r = service.post("/v1/retrieve", "bruno", big)
    assert r.status_code == 413 and "bytes" in r.json()["detail"]
