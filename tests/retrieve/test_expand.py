"""Stage 2, query expansion: the offline table, the Groq expander against a local server that
speaks Groq's protocol, and expanded searches through the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import groq
import pytest

from trilha.access.policy import Access, visible
from trilha.access.principal import Principal
from trilha.errors import ConfigurationError
from trilha.retrieve.expand import LLMQueryExpander, OfflineExpander, make_expander
from trilha.settings import TrilhaSettings
from trilha.testing.groq_server import GroqTestServer, Reply, json_reply
from trilha.workspace import Workspace

OFFLINE = OfflineExpander.load()


@pytest.mark.parametrize(
    ("query", "lang", "expected"),
    [
        ("dano moral em contrato bancário", "pt", ["dano extrapatrimonial em contrato bancário"]),
        ("cabe Recurso Especial?", "pt", ["cabe REsp?"]),
        (
            "REsp 1.234.567 sobre LGPD",
            "pt",
            [
                "recurso especial 1.234.567 sobre LGPD",
                "REsp 1.234.567 sobre Lei Geral de Proteção de Dados",
                "REsp 1.234.567 sobre Lei 13.709/2018",
            ],
        ),
        ("qual o prazo prescricional", "pt", ["qual o prescrição"]),
        ("politica de ferias", "pt", ["politica de descanso anual"]),  # accents ignored
        ("remote work policy", "en", ["work from home policy", "telework policy"]),
        ("resposta do fornecedor", "pt", []),  # REsp is matched as written, whole words only
        ("dano moral", "en", []),  # Portuguese groups apply to Portuguese queries
    ],
)
def test_offline_variants(query: str, lang: str, expected: list[str]) -> None:
    assert OFFLINE.expand(query, lang).variants == expected


def test_offline_variants_stop_at_the_limit_and_repeat_nothing() -> None:
    found = OFFLINE.expand("trabalho remoto e reembolso de colaborador", "pt").variants
    assert len(found) == 3 and len(set(found)) == 3
    assert found[:2] == [
        "teletrabalho e reembolso de colaborador",
        "home office e reembolso de colaborador",
    ]
    assert OfflineExpander.load(limit=1).expand("dano moral", "pt").variants == [
        "dano extrapatrimonial"
    ]


def test_a_broken_table_is_refused_with_its_path(tmp_path: Path) -> None:
    table = tmp_path / "expansions.yaml"
    table.write_text("pt: [[dano moral, dano extrapatrimonial]\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"expansions\.yaml: not a table"):
        OfflineExpander.load(table)


class Script:
    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    def __call__(self, request: dict[str, Any]) -> Reply:
        return self.reply


def _expander(server: GroqTestServer, timeout_s: float = 3.0) -> LLMQueryExpander:
    client = groq.Groq(api_key="test", base_url=server.base_url)
    return LLMQueryExpander(client, "llama-3.1-8b-instant", timeout_s)


def test_the_llm_expander_asks_with_the_seed_rules_and_keeps_three_variants() -> None:
    variants = ["dano extrapatrimonial", "danos morais", "dano moral", "abalo moral", "x"]
    with GroqTestServer(Script(json_reply({"variants": variants}))) as server:
        found = _expander(server).expand("dano moral", "pt")
        request = server.requests[0]
    assert found.variants == ["dano extrapatrimonial", "danos morais", "abalo moral"]
    assert found.warning is None
    system = request["messages"][0]["content"]
    assert "dano extrapatrimonial" in system and "REsp" in system and "art. 206 CC" in system
    assert request["messages"][1] == {"role": "user", "content": "dano moral"}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(content='{"variants": ["late"]}', delay_s=1.5), "APITimeoutError"),
        (Reply(status=500, body={"error": {"message": "boom"}}), "InternalServerError"),
        (Reply(content="not json"), "JSONDecodeError"),
        (Reply(content='{"answer": "dano extrapatrimonial"}'), 'no "variants" list'),
    ],
)
def test_the_llm_expander_gives_nothing_and_says_why_when_the_model_fails(
    reply: Reply, reason: str
) -> None:
    with GroqTestServer(Script(reply)) as server:
        found = _expander(server, timeout_s=0.5).expand("dano moral", "pt")
    assert found.variants == []
    assert found.warning is not None and reason in found.warning
    assert found.warning.startswith("query expansion failed (llama-3.1-8b-instant")


def test_the_backend_setting_picks_the_expander() -> None:
    assert isinstance(make_expander(TrilhaSettings(groq_api_key=None)), OfflineExpander)
    keyed = TrilhaSettings(groq_api_key="k", expansion_backend="auto")
    assert isinstance(make_expander(keyed), LLMQueryExpander)
    offline = TrilhaSettings(groq_api_key="k", expansion_backend="offline")
    assert isinstance(make_expander(offline), OfflineExpander)
    with pytest.raises(ConfigurationError, match="needs TRILHA_GROQ_API_KEY"):
        make_expander(TrilhaSettings(groq_api_key=None, expansion_backend="llm"))


def test_an_expanded_search_merges_the_variants_and_reports_them(small_ws: Workspace) -> None:
    question = "regras de teletrabalho"
    plain = small_ws.search(question, top_k=3, sides=("bm25",))
    assert "pol-remote" not in {h.unit.doc_id for h in plain.hits}
    result = small_ws.search(question, top_k=3, sides=("bm25",), expand=True)
    assert result.trace.expansion_queries == [
        "regras de trabalho remoto",
        "regras de home office",
    ]
    assert result.hits[0].unit.doc_id == "pol-remote"
    assert [h.scores.fused_rank for h in result.hits] == list(range(1, len(result.hits) + 1))
    assert result.trace.stages[1].name == "expand" and result.trace.stages[1].count == 2
    again = small_ws.search(question, top_k=3, sides=("bm25",), expand_query=True)
    assert again.trace.cache_hit and again.trace.expansion_queries == [
        "regras de trabalho remoto",
        "regras de home office",
    ]


def test_variants_are_searched_under_the_callers_visibility(
    tmp_path: Path, small_ws: Workspace
) -> None:
    reader = Principal(user_id="ana", org_ids=["acme"])
    result = small_ws.search("dano moral e trabalho remoto", top_k=8, principal=reader, expand=True)
    assert result.trace.expansion_queries
    for hit in result.hits:
        access = Access(**hit.unit.model_dump(include=set(Access.model_fields)))
        assert visible(access, reader)
