"""The LLM Pre-query path through the real ``groq`` client against :class:`GroqTestServer`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

import groq
import pytest

from trilha.orchestrate.prequery import GroqClassifier, aprequery, prequery
from trilha.settings import TrilhaSettings
from trilha.testing.groq_server import GroqTestServer, Reply, json_reply

NOW = datetime.fromisoformat("2025-06-11T09:30:00-03:00")
QUESTION = "Quais tarefas da minha startup estão atrasadas?"
ANSWER = {
    "retrieval_intent": "graph_insight",
    "focus_labels": ["Task", "Project"],
    "time_horizon": "last_7d",
    "answer_length": "long",
    "overdue": True,
    "ownership": "team",
    "confidence": 0.7,
    "start": "1999-01-01",  # dates from the model are never used
}


class Script:
    """The reply the server gives next; tests change it between calls."""

    def __init__(self) -> None:
        self.reply = json_reply(ANSWER)

    def __call__(self, request: dict[str, Any]) -> Reply:
        return self.reply


@pytest.fixture(scope="module")
def script() -> Script:
    return Script()


@pytest.fixture(scope="module")
def server(script: Script) -> Iterator[GroqTestServer]:
    with GroqTestServer(script) as s:
        yield s


@pytest.fixture()
def classifier(server: GroqTestServer, script: Script) -> Iterator[GroqClassifier]:
    script.reply = json_reply(ANSWER)
    yield GroqClassifier(groq.Groq(api_key="test", base_url=server.base_url), "m-test", 0.5)


def test_a_valid_answer_is_used_and_its_period_resolved_by_code(
    classifier: GroqClassifier, server: GroqTestServer
) -> None:
    out = prequery(QUESTION, now=NOW, classifier=classifier)
    r = out.result
    assert (r.classifier, r.retrieval_intent, r.confidence) == ("llm", "graph_insight", 0.7)
    assert [e.label for e in r.focus_entities] == ["Task", "Project"]
    assert (r.time_horizon.name, r.time_horizon.start, r.time_horizon.end) == (
        "last_7d",
        date(2025, 6, 4),
        date(2025, 6, 11),
    )
    assert (r.answer_constraints.length, r.answer_constraints.language) == ("long", "pt")
    assert r.work.overdue and r.keywords == ("tarefas", "startup", "atrasadas")
    assert [e.name for e in out.trace.stages] == ["heuristic", "llm"]
    sent = server.requests[-1]
    assert sent["model"] == "m-test" and sent["response_format"] == {"type": "json_object"}
    assert sent["messages"][-1] == {"role": "user", "content": QUESTION}


def test_explicit_takes_the_dates_code_read(classifier: GroqClassifier, script: Script) -> None:
    script.reply = json_reply({"retrieval_intent": "procedural", "time_horizon": "explicit"})
    r = prequery("Which tasks are due tomorrow?", now=NOW, classifier=classifier).result
    assert (r.time_horizon.name, r.time_horizon.start) == ("explicit", date(2025, 6, 12))
    r = prequery("Which tasks are due?", now=NOW, classifier=classifier).result
    assert r.time_horizon.name == "all_time"  # no date in the text: nothing to trust
    script.reply = json_reply({"retrieval_intent": "procedural", "time_horizon": "today"})
    r = prequery("Which tasks are due tomorrow?", now=NOW, classifier=classifier).result
    assert r.time_horizon.start == date(2025, 6, 12)  # dates in the text win over a name


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        (Reply(content="{}", delay_s=1.5), "llm timed out after 0.5 s; heuristic used"),
        (Reply(status=500), "llm returned HTTP 500; heuristic used"),
        (Reply(status=429), "llm returned HTTP 429; heuristic used"),
        (Reply(content="not json"), "llm answer is not a JSON object"),
        (json_reply({"retrieval_intent": "chitchat"}), "llm answer refused: retrieval_intent"),
        (
            json_reply({"retrieval_intent": "factual", "focus_labels": ["Startup"]}),
            "llm answer refused: focus_labels are not graph labels: Startup",
        ),
        (json_reply(["factual"]), "llm answer refused"),
    ],
)
def test_failures_fall_back_to_the_heuristic_and_say_why(
    classifier: GroqClassifier, script: Script, reply: Reply, detail: str
) -> None:
    script.reply = reply
    out = prequery(QUESTION, now=NOW, classifier=classifier)
    assert out.result.classifier == "heuristic"
    assert out.result.retrieval_intent == "procedural"
    assert out.trace.stages[-1].name == "llm" and out.trace.stages[-1].note.startswith(detail)
    assert out.trace.stages[-1].note.endswith("heuristic used")


def test_a_timeout_is_not_retried(
    classifier: GroqClassifier, server: GroqTestServer, script: Script
) -> None:
    script.reply = Reply(status=503)
    before = len(server.requests)
    prequery(QUESTION, now=NOW, classifier=classifier)
    assert len(server.requests) == before + 1


def test_an_unreachable_server_falls_back() -> None:
    client = groq.Groq(api_key="test", base_url="http://127.0.0.1:9")
    out = prequery(QUESTION, now=NOW, classifier=GroqClassifier(client, "m", 0.5))
    assert out.result.classifier == "heuristic"
    assert out.trace.stages[-1].note.startswith("llm unreachable")


def test_async_with_the_async_client(server: GroqTestServer, script: Script) -> None:
    script.reply = json_reply(ANSWER)
    client = groq.AsyncGroq(api_key="test", base_url=server.base_url)
    out = asyncio.run(aprequery(QUESTION, now=NOW, classifier=GroqClassifier(client, "m", 0.5)))
    assert (out.result.classifier, out.result.retrieval_intent) == ("llm", "graph_insight")
    sync = prequery(QUESTION, now=NOW, classifier=GroqClassifier(client, "m", 0.5))
    note = sync.trace.stages[-1].note
    assert note == "an AsyncGroq client needs aprequery, not prequery; heuristic used"


def test_async_with_a_sync_client_and_a_timeout(server: GroqTestServer, script: Script) -> None:
    script.reply = Reply(content="{}", delay_s=1.5)
    client = groq.Groq(api_key="test", base_url=server.base_url)
    out = asyncio.run(aprequery(QUESTION, now=NOW, classifier=GroqClassifier(client, "m", 0.3)))
    assert out.trace.stages[-1].note == "llm timed out after 0.3 s; heuristic used"


def test_the_client_factory_reads_the_settings(
    server: GroqTestServer, script: Script, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trilha.llm.groq import async_groq_client, groq_client

    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.delenv("TRILHA_GROQ_API_KEY", raising=False)
    assert groq_client(TrilhaSettings()) is None and async_groq_client(TrilhaSettings()) is None
    monkeypatch.setenv("GROQ_API_KEY", "plain")
    monkeypatch.setenv("TRILHA_GROQ_BASE_URL", server.base_url)
    settings = TrilhaSettings()
    assert settings.groq_api_key == "plain"
    client = groq_client(settings)
    assert client is not None and client.max_retries == 0
    script.reply = json_reply({"retrieval_intent": "strategic"})
    got = GroqClassifier(client, settings.groq_model, settings.llm_timeout_s)
    assert prequery("Oi", now=NOW, classifier=got).result.retrieval_intent == "strategic"
    assert server.requests[-1]["model"] == "llama-3.1-8b-instant"
    monkeypatch.setenv("TRILHA_GROQ_API_KEY", "trilha")
    assert TrilhaSettings().groq_api_key == "trilha"
