"""The Agent Router (seed 005, as seed 004 draws it): which agent a question goes to.

The router runs Pre-query on the question (the orchestrator's LLM classifier when it has one,
else the offline heuristic) and picks the agent whose intents (``default_intent`` plus
``intents`` in ``agents/*.yaml``) hold the question's ``retrieval_intent``. The shipped agents
split the six intents: ``knowledge_agent`` factual and graph_insight, ``task_agent`` procedural
and organizational, ``user_agent`` orientation and strategic. An intent no agent claims goes to
the first agent by name; an intent two agents claim is a :class:`ConfigurationError`.

Why not a "router" agent that hands off: it costs an LLM round trip before any retrieval, and
its choice cannot be tested offline nor explained. The Pre-query intent is the same one the
orchestrator plans retrieval with, it is logged, and a misrouted question can still be handed
off by the agent that got it (every agent may hand off to the others).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from trilha.config import AgentSpec, Intent
from trilha.errors import ConfigurationError
from trilha.orchestrate import Orchestrator
from trilha.orchestrate.prequery import GroqClassifier, PreQuery, aprequery, prequery


@dataclass(frozen=True)
class Route:
    """Where a question goes, and why."""

    agent: AgentSpec
    intent: Intent
    classifier: str
    confidence: float
    fallback: bool

    def explain(self) -> str:
        """One line: the agent, the intent and who decided it."""
        how = "no agent claims it, first agent used" if self.fallback else "claimed"
        return (
            f"{self.agent.name} ← intent {self.intent} ({self.classifier}, "
            f"{self.confidence:.2f}; {how})"
        )


def intent_map(agents: Mapping[str, AgentSpec]) -> dict[Intent, str]:
    """``{intent: agent name}`` from the agents' routed intents; refuses an intent claimed twice."""
    claimed: dict[Intent, str] = {}
    for spec in agents.values():
        for intent in spec.routed_intents:
            if intent in claimed:
                raise ConfigurationError(
                    f"agents: intent {intent!r} is claimed by {claimed[intent]} and {spec.name};"
                    " keep it in one agent's default_intent or intents"
                )
            claimed[intent] = spec.name
    return claimed


class AgentRouter:
    """Routes questions to ``agents`` by their Pre-query intent (see the module docstring)."""

    def __init__(
        self, agents: Mapping[str, AgentSpec], *, classifier: GroqClassifier | None = None
    ) -> None:
        if not agents:
            raise ConfigurationError("agents: none defined; add agents/*.yaml to route to")
        self.agents = dict(agents)
        self.by_intent = intent_map(self.agents)
        self.fallback = self.agents[sorted(self.agents)[0]]
        self.classifier = classifier

    @classmethod
    def of(cls, orchestrator: Orchestrator) -> AgentRouter:
        """The router over the orchestrator's agents, with its Pre-query classifier."""
        return cls(orchestrator.config.agents, classifier=orchestrator.classifier)

    def decide(self, question: str) -> Route:
        """The :class:`Route` for ``question`` (an empty question is a BadRequestError)."""
        outcome = prequery(question, now=datetime.now(UTC), classifier=self.classifier)
        return self._route(outcome.result)

    async def adecide(self, question: str) -> Route:
        """:meth:`decide` for a running event loop (an LLM classifier is awaited)."""
        outcome = await aprequery(question, now=datetime.now(UTC), classifier=self.classifier)
        return self._route(outcome.result)

    def route(self, question: str) -> AgentSpec:
        """The agent ``question`` goes to."""
        return self.decide(question).agent

    def _route(self, pre: PreQuery) -> Route:
        name = self.by_intent.get(pre.retrieval_intent)
        agent = self.agents[name] if name is not None else self.fallback
        return Route(agent, pre.retrieval_intent, pre.classifier, pre.confidence, name is None)
