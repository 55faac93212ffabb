"""Property-based fuzzing of the OpenAPI schema (schemathesis): whatever a caller sends to any
operation — valid bodies and bodies made to break the schema — with a valid key, another
tenant's key or none, the answer is never a 5xx and never a traceback, and it is what
/openapi.json says it may be: a documented status, content type, headers and body.

``make test`` makes :data:`QUICK` examples per operation and mode; ``make check`` (marked
``sweep``) makes ``TRILHA_FUZZ_EXAMPLES`` (:data:`EXAMPLES`, 60 unless set; a one-off run with
500 makes some 25,000 calls)."""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode, checks

from tests.server.conftest import KEYS, Service

#: Examples generated per operation and mode: in ``make test``, and in ``make check``.
QUICK = 5
EXAMPLES = int(os.environ.get("TRILHA_FUZZ_EXAMPLES", "60"))

#: What each answer is checked for: no 5xx, and everything /openapi.json says of it.
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]

OPERATIONS = [
    ("POST", "/v1/retrieve"), ("POST", "/v1/query"), ("POST", "/v1/context"),
    ("POST", "/v1/factual/dual-search"), ("POST", "/v1/search/features"),
    ("POST", "/graphrag/subgraph"), ("POST", "/graphrag/path"), ("POST", "/graphrag/topn"),
    ("GET", "/v1/jobs/stats"), ("GET", "/healthz"), ("GET", "/metrics"),
]  # fmt: skip


def _operations(service: Service) -> dict[tuple[str, str], Any]:
    schema = schemathesis.openapi.from_asgi("/openapi.json", service.client.app)
    ops = [result.ok() for result in schema.get_all_operations()]
    return {(op.method.upper(), op.path): op for op in ops}


def test_every_operation_is_fuzzed(service: Service) -> None:
    assert set(_operations(service)) == set(OPERATIONS)


#: Operations that take no input, or only optional free-text headers, have no invalid input
#: to fuzz them with.
NO_INPUT = {("GET", "/healthz"), ("GET", "/metrics")}
CASES = [
    pytest.param(method, path, mode, n, id=f"{method} {path} {mode.value}{tag}", marks=marks)
    for method, path in OPERATIONS
    for mode in GenerationMode
    if mode is GenerationMode.POSITIVE or (method, path) not in NO_INPUT
    for n, tag, marks in [(QUICK, "", []), (EXAMPLES, " sweep", [pytest.mark.sweep])]
]


@pytest.mark.parametrize("method,path,mode,examples", CASES)
def test_no_operation_answers_5xx(
    service: Service, method: str, path: str, mode: GenerationMode, examples: int
) -> None:
    operation = _operations(service)[(method, path)]

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(mode))
    def check(case: Any) -> None:
        for headers in ({"X-API-Key": KEYS["maria"]}, {"X-API-Key": KEYS["gina"]}, {}):
            response = case.call_and_validate(headers=headers, checks=CHECKS)
            if response.status_code >= 400:
                detail = response.json()["detail"]
                assert isinstance(detail, str) and detail and "Traceback" not in detail

    check()
