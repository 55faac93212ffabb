"""The Agent Router's intent map: every intent goes to one agent, chosen by the agents' YAML."""

from __future__ import annotations

import pytest

from trilha.config import INTENTS, AgentSpec, load_agents
from trilha.errors import ConfigurationError
from trilha.llamaindex.agent_router import AgentRouter, intent_map


def spec(name: str, default: str, *more: str) -> AgentSpec:
    return AgentSpec.model_validate(
        {
            "name": name,
            "description": "d",
            "default_intent": default,
            "intents": list(more),
            "tools": ["trilha_context"],
            "answer_style": "s",
        }
    )


def test_shipped_agents_split_the_six_intents() -> None:
    assert intent_map(load_agents()) == {
        "factual": "knowledge_agent",
        "graph_insight": "knowledge_agent",
        "procedural": "task_agent",
        "organizational": "task_agent",
        "orientation": "user_agent",
        "strategic": "user_agent",
    }
    assert set(intent_map(load_agents())) == set(INTENTS)


def test_an_intent_claimed_twice_is_refused() -> None:
    agents = {
        "a_agent": spec("a_agent", "factual"),
        "b_agent": spec("b_agent", "procedural", "factual"),
    }
    with pytest.raises(ConfigurationError) as caught:
        AgentRouter(agents)
    assert str(caught.value) == (
        "agents: intent 'factual' is claimed by a_agent and b_agent;"
        " keep it in one agent's default_intent or intents"
    )


def test_an_unclaimed_intent_goes_to_the_first_agent_by_name() -> None:
    agents = {"z_agent": spec("z_agent", "factual"), "b_agent": spec("b_agent", "procedural")}
    router = AgentRouter(agents)
    route = router.decide("O que deveríamos priorizar esta semana?")
    assert (route.intent, route.agent.name, route.fallback) == ("strategic", "b_agent", True)
    assert "no agent claims it" in route.explain()
    assert router.route("Quais tarefas estão atrasadas?").name == "b_agent"


def test_no_agents_no_router() -> None:
    with pytest.raises(ConfigurationError, match="agents: none defined"):
        AgentRouter({})


def test_routed_intents_and_agent_type() -> None:
    agent = spec("task_agent", "procedural", "organizational", "procedural")
    assert agent.routed_intents == ("procedural", "organizational")
    assert agent.agent_type == "task"
