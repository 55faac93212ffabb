"""The Knowledge, Task and User agents over the sample organisation, with a scripted LLM.

Only the model is scripted (:class:`~trilha.testing.scripted_llm.ScriptedLLM`); the agents, the
AgentWorkflow, the tools, the orchestrator, the workspace and its FalkorDB graph are real.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from llama_index.core.base.llms.types import ChatMessage

from tests.conftest import READER, make_docs
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError, ConfigurationError
from trilha.llamaindex.agent_router import AgentRouter
from trilha.llamaindex.agent_run import AgentAnswer, aask_agents, ask_agents
from trilha.llamaindex.agents import agent_tools, build_agent, build_workflow, system_prompt
from trilha.orchestrate import ContextBundle, Orchestrator
from trilha.settings import TrilhaSettings
from trilha.testing.schema_args import ToolSpec
from trilha.testing.scripted_llm import ScriptedLLM, ask_then_cite, call_tool, called
from trilha.workspace import Workspace

US1 = "Qual é o prazo para pedir reembolso de despesas de viagem?"
US2 = "Quais tarefas da minha startup estão atrasadas?"
US3 = "O que deveríamos priorizar esta semana?"
#: Argument names through which a tool could let the LLM pick whose view it gets.
WHO = {"user_id", "user", "principal", "role", "roles", "clearance", "org_ids", "project_id"}


def ask(
    orch: Orchestrator, question: str, user: str, llm: ScriptedLLM | None = None
) -> AgentAnswer:
    return ask_agents(orch, llm or ScriptedLLM(), question, user_id=user, conversation_id="c-t")


def ids(bundle: ContextBundle) -> set[str]:
    return {item.item_id for item in bundle.context_items}


@pytest.mark.parametrize(
    ("question", "agent", "intent"),
    [
        (US1, "knowledge_agent", "factual"),
        (US2, "task_agent", "procedural"),
        (US3, "user_agent", "strategic"),
        ("O que você sugere que eu faça agora?", "user_agent", "orientation"),
        ("Quem responde a quem na área de TI?", "task_agent", "organizational"),
    ],
)
def test_router_picks_the_agent_of_the_intent(
    agent_orch: Orchestrator, question: str, agent: str, intent: str
) -> None:
    route = AgentRouter.of(agent_orch).decide(question)
    assert (route.agent.name, route.intent, route.fallback) == (agent, intent, False)
    assert route.explain().startswith(f"{agent} ← intent {intent} (heuristic")


def test_tools_are_the_specs_and_bound_to_the_user(agent_orch: Orchestrator) -> None:
    for spec in agent_orch.config.agents.values():
        tools = agent_tools(agent_orch, spec, user_id="bruno.ti", conversation_id="c")
        assert [t.metadata.get_name() for t in tools] == list(spec.tools)
        assert spec.tools[0] == "trilha_context"
        for tool in tools:
            fields = set(tool.metadata.get_parameters_dict()["properties"])
            assert not fields & WHO, (spec.name, tool.metadata.name, fields)
        assert set(tools[0].metadata.get_parameters_dict()["properties"]) == {"question"}


def test_an_unknown_user_gets_no_agent(agent_orch: Orchestrator) -> None:
    spec = agent_orch.config.agents["task_agent"]
    with pytest.raises(
        BadRequestError, match=r"user 'mallory' is not in .*principals\.yaml; known users"
    ):
        build_agent(agent_orch, spec, ScriptedLLM(), user_id="mallory", conversation_id="c")


def test_system_prompt_says_role_style_citations_language_and_handoffs(
    agent_orch: Orchestrator,
) -> None:
    agents = agent_orch.config.agents
    prompt = system_prompt(agents["task_agent"], agents)
    assert prompt.startswith("You are task_agent: Answers questions about tasks and projects")
    assert "Answer style: list of tasks with status and due date." in prompt
    assert "Cite every statement with the source of the item it comes from." in prompt
    assert "Answer in the language of the question." in prompt
    assert "First call trilha_context" in prompt and agents["task_agent"].instructions in prompt
    assert "- knowledge_agent: " in prompt and "- task_agent: " not in prompt


def test_us2_task_agent_brings_brunos_late_tasks(agent_orch: Orchestrator) -> None:
    llm = ScriptedLLM()
    answer = ask(agent_orch, US2, "bruno.ti", llm)
    assert (answer.route.agent.name, answer.agent) == ("task_agent", "task_agent")
    assert [(r.agent, r.tool_name, r.tool_kwargs) for r in answer.tool_results] == [
        ("task_agent", "trilha_context", {"question": US2})
    ]
    [bundle] = answer.bundles
    assert {"Task:t-ropa", "Task:t-treinamento"} <= ids(bundle)
    job = next(j for j in agent_orch.jobs.recent("bruno.ti") if j.id == bundle.trace.job_id)
    assert (job.user_id, job.agent_type, job.conversation_id) == ("bruno.ti", "task", "c-t")
    assert "Style: list of tasks with status and due date." in bundle.llm_instructions
    # the model read the bundle's items and sources, and the answer cites them
    assert "source: Atualizar o registro de operações de tratamento (ROPA) (Task:t-ropa)" in (
        llm.calls[-1].text()
    )
    assert "(Task:t-ropa))" in answer.text and "(Task:t-treinamento))" in answer.text
    assert "You are task_agent" in llm.calls[0].system


def test_us2_for_carla_never_shows_brunos_tasks(agent_orch: Orchestrator) -> None:
    llm = ScriptedLLM()
    answer = ask(agent_orch, US2, "carla.beta", llm)
    [bundle] = answer.bundles
    assert "Task:t-beta-vpn" in ids(bundle)
    assert not {"Task:t-ropa", "Task:t-treinamento"} & ids(bundle)
    shown = "\n".join(call.text() for call in llm.calls)
    assert "t-ropa" not in shown and "ROPA" not in shown and "ROPA" not in answer.text


def test_the_llm_cannot_ask_as_another_user(agent_orch: Orchestrator) -> None:
    def as_bruno(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        if not called(messages, "trilha_context"):
            return call_tool("trilha_context", question=US2, user_id="bruno.ti")
        return ask_then_cite()(messages, tools)

    llm = ScriptedLLM(as_bruno)
    answer = ask(agent_orch, US2, "carla.beta", llm)
    [result] = answer.tool_results
    assert result.output.is_error and answer.bundles == []
    assert "t-ropa" not in "\n".join(call.text() for call in llm.calls)


def test_us3_user_agent_brings_priorities_and_objectives(agent_orch: Orchestrator) -> None:
    answer = ask(agent_orch, US3, "maria.cfo")
    assert answer.agent == "user_agent"
    [bundle] = answer.bundles
    labels = {item.item_type for item in bundle.context_items}
    assert {"Task", "OKR"} <= labels
    assert "(OKR:okr-custo-ti))" in answer.text


def test_us1_knowledge_agent_cites_document_passages(agent_orch: Orchestrator) -> None:
    answer = ask(agent_orch, US1, "maria.cfo")
    assert answer.agent == "knowledge_agent"
    [bundle] = answer.bundles
    chunks = [i for i in bundle.context_items if i.item_type == "chunk"]
    assert chunks and all(i.citation.doc_id and i.citation.unit_id for i in chunks)
    assert any(i.citation.label in answer.text for i in chunks)


def test_a_misrouted_question_is_handed_off(agent_orch: Orchestrator) -> None:
    def knowledge_hands_off(
        messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> ChatMessage:
        prompt = messages[0].content or ""
        if prompt.startswith("You are knowledge_agent") and not called(messages, "handoff"):
            return call_tool("handoff", to_agent="task_agent", reason="it is about tasks")
        return ask_then_cite()(messages, tools)

    flow = build_workflow(
        agent_orch,
        ScriptedLLM(knowledge_hands_off),
        user_id="bruno.ti",
        conversation_id="c-t",
        root="knowledge_agent",
    )
    assert flow.root_agent == "knowledge_agent"
    router = AgentRouter({"knowledge_agent": agent_orch.config.agents["knowledge_agent"]})
    answer = ask_agents(
        agent_orch,
        ScriptedLLM(knowledge_hands_off),
        US2,
        user_id="bruno.ti",
        conversation_id="c-t",
        router=router,
    )
    assert answer.route.agent.name == "knowledge_agent" and answer.agent == "task_agent"
    assert [(r.agent, r.tool_name) for r in answer.tool_results] == [
        ("knowledge_agent", "handoff"),
        ("task_agent", "trilha_context"),
    ]
    assert "Task:t-ropa" in ids(answer.bundles[0])


async def test_async_form_and_remembered_turns(agent_orch: Orchestrator) -> None:
    answer = await aask_agents(
        agent_orch,
        ScriptedLLM(),
        US2,
        user_id="bruno.ti",
        conversation_id="c-remember",
        remember=True,
    )
    turns = agent_orch.memory.turns("bruno.ti", conversation_id="c-remember")
    assert [(t.role, t.text) for t in reversed(turns)] == [
        ("user", US2),
        ("assistant", answer.text),
    ]


def test_root_must_be_an_agent(agent_orch: Orchestrator) -> None:
    with pytest.raises(ConfigurationError, match="root agent 'boss' is not defined"):
        build_workflow(
            agent_orch, ScriptedLLM(), user_id="bruno.ti", conversation_id="c", root="boss"
        )


def test_without_a_graph_the_graph_tools_are_left_out(
    embedder: SentenceTransformerEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = TrilhaSettings(graph_backend="none")
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(make_docs())
        orch = Orchestrator(ws, principals={READER.user_id: READER})
        spec = orch.config.agents["knowledge_agent"]
        tools = agent_tools(orch, spec, user_id=READER.user_id, conversation_id="c")
        assert [t.metadata.name for t in tools] == ["trilha_context", "trilha_search"]
        assert "knowledge_agent: no graph in this workspace" in caplog.text
        answer = ask_agents(orch, ScriptedLLM(), US1, user_id=READER.user_id, conversation_id="c")
        orch.close()
    assert "Reembolso de despesas de viagem" in answer.text and "(source: pol-travel" in answer.text
