"""The local Groq stand-in speaks the protocol the real ``groq`` client expects."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import groq
import pytest

from trilha.testing.groq_server import GroqTestServer, Reply, ToolCall

MESSAGES = [{"role": "user", "content": "oi"}]


def test_tool_calls_and_finish_reason() -> None:
    reply = Reply(tool_calls=[ToolCall("search", {"q": "lgpd"}, id="c1"), ToolCall("graph")])
    with GroqTestServer(lambda request: reply) as server:
        client = groq.Groq(api_key="k", base_url=server.base_url)
        choice = client.chat.completions.create(model="m", messages=MESSAGES).choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("c1", "search", {"q": "lgpd"}),
        ("call_1", "graph", {}),
    ]


def test_streaming_gives_the_same_answer_in_chunks() -> None:
    reply = Reply(content="olá", tool_calls=[ToolCall("search", '{"q": "x"}')])
    with GroqTestServer(lambda request: reply) as server:
        client = groq.Groq(api_key="k", base_url=server.base_url)
        chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    deltas = [c.choices[0].delta for c in chunks]
    assert deltas[0].content == "olá"
    assert deltas[1].tool_calls and deltas[1].tool_calls[0].function.arguments == '{"q": "x"}'
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_requests_are_recorded_and_the_responder_sees_them() -> None:
    seen = []

    def echo(request: dict[str, Any]) -> Reply:
        seen.append(request["messages"][-1]["content"])
        return Reply(content=f"eco: {request['messages'][-1]['content']}", finish_reason="length")

    with GroqTestServer(echo) as server:
        client = groq.Groq(api_key="k", base_url=server.base_url)
        out = client.chat.completions.create(model="m", messages=MESSAGES, temperature=0)
    assert out.choices[0].message.content == "eco: oi"
    assert out.choices[0].finish_reason == "length"
    assert seen == ["oi"] and server.requests[0]["temperature"] == 0


def test_a_raw_body_and_an_unknown_path() -> None:
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    with GroqTestServer(lambda request: Reply(body=body)) as server:
        client = groq.Groq(api_key="k", base_url=server.base_url)
        assert client.chat.completions.create(model="m", messages=MESSAGES).choices == []
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(f"{server.base_url}/v1/x", b"{}"))
        assert e.value.code == 404


def test_base_url_needs_a_started_server() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        GroqTestServer().base_url  # noqa: B018
