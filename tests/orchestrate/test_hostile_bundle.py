"""The bundle as a demanding reader checks it: degradations in the trace are one line each, even
when the backend's message spans several (the Bolt driver's does)."""

from __future__ import annotations

from datetime import UTC, datetime

from trilha.access import Principal
from trilha.config import OrchestratorConfig
from trilha.orchestrate.assemble import assemble
from trilha.orchestrate.plan import plan_retrieval
from trilha.orchestrate.prequery import prequery
from trilha.orchestrate.request import RetrievalRequest
from trilha.orchestrate.sources import Ask, Found

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
BOLT_DOWN = (
    "graph:process_state skipped: the graph did not answer (Bolt query failed: Couldn't connect "
    "to 127.0.0.1:1:\nFailed to establish connection (reason [Errno 111] Connection refused))"
)


def _ask() -> Ask:
    config = OrchestratorConfig.load()
    request = RetrievalRequest.make(
        user_id="bruno.ti", conversation_id="c", raw_query="Quais tarefas estão atrasadas?"
    )
    pre = prequery(request.raw_query, now=NOW).result
    plan = plan_retrieval(
        request, pre, config=config.retrieval, profiles=config.profiles, depths=config.depths
    )
    principal = Principal(user_id="bruno.ti", org_ids=["acme"])
    return Ask(request, principal, pre, plan, config.retrieval, NOW, config.profiles)


def test_a_multi_line_warning_is_one_line_in_the_trace() -> None:
    founds = [Found("graph:process_state", warning=BOLT_DOWN), Found("memory")]
    bundle = assemble(_ask(), founds, job_id="j1", steps=[], latency_ms=1.0)
    assert bundle.trace.warnings == [
        "graph:process_state skipped: the graph did not answer (Bolt query failed: Couldn't "
        "connect to 127.0.0.1:1: Failed to establish connection (reason [Errno 111] "
        "Connection refused))"
    ]
