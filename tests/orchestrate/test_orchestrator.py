"""The orchestrator on the sample organisation: seed 004's user stories, bundle shape, budgets,
provenance and visibility."""

from __future__ import annotations

import asyncio

import pytest

from trilha.access.policy import Access, visible
from trilha.errors import BadRequestError
from trilha.memory import JobGraphWriter
from trilha.orchestrate import ContextBundle, Orchestrator, RetrievalRequest
from trilha.workspace import Workspace

US2 = "Quais tarefas da minha startup estão atrasadas?"
US3 = "O que deveríamos priorizar esta semana?"
US1 = "Qual o prazo para comunicar um incidente de segurança com dados pessoais?"


def ask(orch: Orchestrator, user: str, query: str, **fields: object) -> ContextBundle:
    fields.setdefault("conversation_id", f"test-{user}")
    return orch.retrieve(RetrievalRequest.make(user_id=user, raw_query=query, **fields))


def ids(bundle: ContextBundle, prefix: str) -> set[str]:
    return {i.item_id for i in bundle.context_items if i.item_id.startswith(prefix)}


def test_us2_late_tasks_of_the_callers_startup_with_their_projects(
    orchestrator: Orchestrator,
) -> None:
    bundle = ask(orchestrator, "bruno.ti", US2, agent_type="task")
    assert bundle.trace.prequery.retrieval_intent == "procedural"
    assert bundle.cdc_metadata.query_profile_used == "process_state"
    assert ids(bundle, "Task:") >= {"Task:t-ropa", "Task:t-treinamento"}
    assert not ids(bundle, "Task:") & {"Task:t-beta-vpn", "Task:t-contratos", "Task:t-orcamento"}
    ropa = next(i for i in bundle.context_items if i.item_id == "Task:t-ropa")
    assert "Project:p-lgpd" in ropa.text or "p-lgpd" in str(ropa.metadata)
    beta = ask(orchestrator, "carla.beta", US2, agent_type="task")
    assert ids(beta, "Task:") & {"Task:t-beta-vpn"} and not ids(beta, "Task:t-ropa")


def test_an_agent_without_a_definition_is_said_in_the_trace(orchestrator: Orchestrator) -> None:
    bundle = ask(orchestrator, "bruno.ti", US1, agent_type="auditor")
    notes = [s.note for s in bundle.trace.stages if s.name == "agent"]
    note = "agent_type 'auditor' has no definition (knowledge, task, user); defaults used"
    assert notes == [note] and bundle.trace.warnings[0] == note
    known = ask(orchestrator, "bruno.ti", US1, agent_type="knowledge")
    assert not [s for s in known.trace.stages if s.name == "agent"]
    assert note not in known.trace.warnings


def test_us3_priorities_combine_memory_priority_items_and_strategy(
    orchestrator: Orchestrator,
) -> None:
    bundle = ask(orchestrator, "maria.cfo", US3, conversation_id="conv-maria-1", agent_type="user")
    assert bundle.trace.prequery.retrieval_intent in ("strategic", "orientation")
    assert bundle.by_memory_class.working_set, "this conversation's turns and active items"
    found = {i.item_id for i in bundle.context_items}
    assert "Task:t-orcamento" in found  # priority_node (REQ-RETR-019)
    assert {"OKR:okr-incidentes", "OKR:okr-custo-ti"} <= found
    assert "StrategicObjective:so-nuvem-2025" not in found  # expired: validity filter
    bruno = ask(orchestrator, "bruno.ti", US3)
    bruno_found = {i.item_id for i in bruno.context_items}
    assert "Task:t-orcamento" not in bruno_found and "OKR:okr-custo-ti" not in bruno_found


def test_us1_factual_with_citations_and_claims_at_d3(orchestrator: Orchestrator) -> None:
    bundle = ask(orchestrator, "maria.cfo", US1, depth="D3")
    assert bundle.trace.prequery.retrieval_intent == "factual"
    assert bundle.by_memory_class.semantic or bundle.by_memory_class.procedural
    docs = {i.citation.doc_id for i in bundle.context_items if i.citation.doc_id}
    assert "policy/protecao-dados-lgpd" in docs or "it/incident-response-runbook" in docs
    claims = {c.item_id for c in bundle.by_memory_class.claims}
    assert "Claim:claim-anpd-prazo" in claims
    assert "Claim:claim-vpn-antiga" not in claims  # expired


def test_every_item_has_provenance_a_citation_and_fits_the_budget(
    orchestrator: Orchestrator,
) -> None:
    for depth in ("D0", "D1", "D2", "D3", "D4"):
        for max_tokens in (None, 120):
            bundle = ask(orchestrator, "maria.cfo", US3, depth=depth, max_tokens=max_tokens)
            budget = bundle.trace.limits.max_tokens_context
            assert bundle.tokens_estimated == sum(i.tokens for i in bundle.context_items)
            assert bundle.tokens_estimated <= budget
            assert bundle.cdc_metadata.depth_level == depth
            assert bundle.depth_used == int(depth[1])
            assert len(bundle.context_items) <= bundle.trace.limits.max_results
            for item in bundle.context_items:
                assert item.provenance.source_ref and item.citation.label
            grouped = [i for _, items in bundle.by_memory_class for i in items]
            assert sorted(i.item_id for i in grouped) == sorted(
                i.item_id for i in bundle.context_items
            )


def test_no_item_is_hidden_from_its_reader(orchestrator: Orchestrator, org_ws: object) -> None:
    for user in ("maria.cfo", "bruno.ti", "carla.beta"):
        principal = orchestrator.principal_for(user)
        for query in (US1, US2, US3, "Qual é o orçamento de 2027?"):
            bundle = ask(orchestrator, user, query, depth="D3")
            for item in bundle.context_items:
                access = item.metadata.get("access")
                if access is not None:
                    assert visible(Access(**access), principal), (user, item.item_id)
                if item.item_type == "turn":
                    assert item.metadata["user_id"] == user


def test_the_principal_comes_from_the_directory_not_the_request(
    orchestrator: Orchestrator,
) -> None:
    with pytest.raises(BadRequestError, match=r"is not in .*; known users: "):
        ask(orchestrator, "mallory", US2)
    with pytest.raises(BadRequestError, match="not a member of project"):
        ask(orchestrator, "maria.cfo", US2, project_id="atlas")


def test_async_matches_sync(orchestrator: Orchestrator) -> None:
    request = RetrievalRequest.make(user_id="bruno.ti", conversation_id="x", raw_query=US2)
    sync = orchestrator.retrieve(request)
    asynced = asyncio.run(orchestrator.aretrieve(request))

    def kept(bundle: ContextBundle) -> list[str]:  # the first run's job is the second's memory
        return [i.item_id for i in bundle.context_items if i.item_type != "job"]

    assert kept(sync) == kept(asynced)


def test_each_retrieval_is_logged_as_a_job(orchestrator: Orchestrator) -> None:
    bundle = ask(orchestrator, "carla.beta", US2)
    job = next(j for j in orchestrator.jobs.recent("carla.beta", 5) if j.id == bundle.trace.job_id)
    assert job.nodes_returned == len(bundle.context_items)
    assert job.returned == tuple(i.item_id for i in bundle.context_items)
    assert job.depth_level == bundle.cdc_metadata.depth_level


def test_each_job_is_mirrored_into_the_graph_with_what_it_returned(
    orchestrator: Orchestrator, org_ws: Workspace
) -> None:
    bundle = ask(orchestrator, "bruno.ti", US2)
    orchestrator.recorder.flush()
    linked = JobGraphWriter(org_ws.require_graph().store).linked(bundle.trace.job_id)
    assert "Task:t-ropa" in linked
    assert set(linked) <= {i.item_id for i in bundle.context_items}
