"""The Groq answer path against a local server speaking Groq's protocol, and its fallbacks."""

from __future__ import annotations

from typing import Any

import groq
import pytest

from trilha.access import Principal
from trilha.answer import aask, ask
from trilha.answer.compose import make_composer
from trilha.answer.llm import GroqComposer, cited_sentences
from trilha.errors import ConfigurationError
from trilha.settings import TrilhaSettings
from trilha.testing.groq_server import GroqTestServer, Reply
from trilha.workspace import Workspace

ACME = Principal(user_id="ana", org_ids=["acme"], hierarchy_level=1, clearance=1)


def _composer(server: GroqTestServer, timeout_s: float = 5.0) -> GroqComposer:
    client = groq.Groq(api_key="test", base_url=server.base_url)
    return GroqComposer(client, "llama-test", timeout_s)


def test_llm_answer_keeps_cited_sentences_and_reports_tokens(sample_ws: Workspace) -> None:
    reply = Reply(
        content="O prazo é de cinco anos [1]. Vale para dívidas líquidas [1][2].\n"
        "Uma frase sem citação. Outra com número inexistente [99].",
        usage=(812, 41),
    )
    with GroqTestServer(lambda request: reply) as server:
        answer = ask(sample_ws, "Qual o prazo prescricional da cobrança de dívida?",
                     llm=_composer(server), principal=ACME)  # fmt: skip
        request = server.requests[0]
    assert [s.text for s in answer.sentences] == [
        "O prazo é de cinco anos.",
        "Vale para dívidas líquidas.",
    ]
    assert answer.sentences[1].citations == [1, 2] and len(answer.citations) == 2
    assert answer.answer.splitlines()[0] == "O prazo é de cinco anos. [1]"
    assert (answer.trace.provider, answer.trace.model) == ("groq", "llama-test")
    assert (answer.metrics.cost.tokens_in, answer.metrics.cost.tokens_out) == (812, 41)
    assert any("2 sentence(s) without a valid citation dropped" in w for w in answer.trace.warnings)
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert "answer in Portuguese" in system and "[1] (" in user and "Question:" in user


def test_context_sent_to_the_model_is_masked(sample_ws: Workspace) -> None:
    seen: list[dict[str, Any]] = []

    def responder(request: dict[str, Any]) -> Reply:
        seen.append(request)
        return Reply(content="O contato do DPO é dpo@acme.com.br, CPF 529.982.247-25 [1].")

    with GroqTestServer(responder) as server:
        answer = ask(sample_ws, "Qual é o contato do Encarregado de dados (DPO)?",
                     llm=_composer(server), principal=ACME)  # fmt: skip
    assert "dpo@acme.com.br" not in seen[0]["messages"][1]["content"]
    assert "[EMAIL]" in seen[0]["messages"][1]["content"]
    assert answer.sentences[0].text == "O contato do DPO é [EMAIL], CPF [CPF]."
    assert "529.982.247-25" not in answer.model_dump_json()


def test_no_answer_from_the_model_is_said_plainly(sample_ws: Workspace) -> None:
    with GroqTestServer(lambda request: Reply(content="NO_ANSWER")) as server:
        answer = ask(sample_ws, "prazo prescricional", llm=_composer(server))
    assert answer.answered and not answer.sentences and not answer.citations
    assert answer.answer.startswith("Não encontrei")
    assert any("found no answer" in w for w in answer.trace.warnings)


@pytest.mark.parametrize(
    "reply",
    [Reply(content="late [1].", delay_s=2.0), Reply(status=500, content="boom"),
     Reply(content="Nada citado aqui.")],
)  # fmt: skip
async def test_a_failing_model_falls_back_to_the_extractive_answer(
    sample_ws: Workspace, reply: Reply
) -> None:
    with GroqTestServer(lambda request: reply) as server:
        answer = await aask(sample_ws, "Qual o prazo prescricional da cobrança de dívida?",
                            llm=_composer(server, timeout_s=0.5))  # fmt: skip
    assert answer.trace.model == "extractive" and answer.sentences
    assert any("LLM answer failed (llama-test" in w for w in answer.trace.warnings)


def test_markers_are_parsed_and_stripped() -> None:
    found, dropped = cited_sentences("Alfa [1, 2]. Beta [3]; gama. Delta [2]", {1, 2})
    assert found == [("Alfa.", [1, 2]), ("Delta", [2])] and dropped == 1


def test_composer_choice_follows_the_settings() -> None:
    assert make_composer(TrilhaSettings(answer_backend="extractive", groq_api_key="k")) is None
    assert make_composer(TrilhaSettings(answer_backend="auto", groq_api_key=None)) is None
    chosen = make_composer(TrilhaSettings(answer_backend="auto", groq_api_key="k"))
    assert isinstance(chosen, GroqComposer)
    with pytest.raises(ConfigurationError, match="needs TRILHA_GROQ_API_KEY"):
        make_composer(TrilhaSettings(answer_backend="llm", groq_api_key=None))
