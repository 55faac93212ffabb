"""Entity extraction: rules for pt, en and zh, salience by hand, the LLM wrapper (scripted LLM)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

from trilha.graph.build.extract import KnownEntity, RuleEntityExtractor, entities_in_query, salience
from trilha.graph.build.llm_extract import LLMEntityExtractor
from trilha.types import TextUnit


def found(text: str, gazetteer: Any = None, title: str | None = None) -> dict[str, str]:
    return {e.name: e.type for e in RuleEntityExtractor(gazetteer).extract_text(text, title=title)}


@pytest.mark.parametrize(
    ("count", "top", "pos", "title", "expected"),
    [
        (1, 1, 0.0, False, 1.0),
        (3, 3, 1.0, False, 0.5),
        (1, 3, 0.5, False, 0.5625),
        (1, 3, 0.5, True, 0.7625),
        (2, 2, 0.0, True, 1.0),
        (1, 7, 0.0, False, 0.6667),
    ],
)
def test_salience_table(count: int, top: int, pos: float, title: bool, expected: float) -> None:
    assert salience(count, top, pos, in_title=title) == pytest.approx(expected, abs=1e-4)


def test_portuguese_rules() -> None:
    text = (
        "O Superior Tribunal de Justiça (STJ) aplicou a LGPD. Em 2024, o STJ citou a Lei "
        "Geral de Proteção de Dados. Segundo o relator, a Petrobras recorreu."
    )
    assert found(text) == {
        "Superior Tribunal de Justiça": "Concept",
        "STJ": "Acronym",
        "LGPD": "Acronym",
        "Lei Geral de Proteção de Dados": "Concept",
        "Petrobras": "Concept",
    }


def test_english_rules_and_sentence_starts() -> None:
    text = (
        "The Knowledge Graph lives in Neo4j. However, Microsoft and Bank of America use it. "
        "Today we ship. Graphs are useful. In May the VPN failed. GraphRAG is new."
    )
    assert found(text) == {
        "Knowledge Graph": "Concept",
        "Neo4j": "Concept",
        "Microsoft": "Concept",
        "Bank of America": "Concept",
        "VPN": "Acronym",
        "GraphRAG": "Concept",
    }


def test_sentence_initial_word_kept_when_seen_mid_sentence() -> None:
    assert "Petrobras" in found("Petrobras recorreu. A decisão citou Petrobras.")
    assert "Petrobras" not in found("Petrobras recorreu. A decisão foi mantida.")


def test_shouting_is_not_acronyms() -> None:
    assert found("ESTE TEXTO TODO EM MAIUSCULAS NAO TEM SIGLAS. O STF decidiu.") == {
        "STF": "Acronym"
    }


def test_gazetteer_types_aliases_and_case() -> None:
    gazetteer = [
        KnownEntity(name="Superior Tribunal de Justiça", type="Org", aliases=["STJ"]),
        KnownEntity(name="Neo4j", type="Product"),
    ]
    result = RuleEntityExtractor(gazetteer).extract_text(
        "o stj e o superior   tribunal de justiça usam NEO4J; neo4j é rápido."
    )
    assert [(e.name, e.type, e.occurrences) for e in result] == [
        ("Superior Tribunal de Justiça", "Org", 2),
        ("Neo4j", "Product", 2),
    ]
    assert found("Neo4j rocks", {"Neo4j": "Product"}) == {"Neo4j": "Product"}


def test_salience_order_title_and_cap() -> None:
    text = "Neo4j here. Later Cypher, and Neo4j again, and Cypher, and Cypher."
    result = RuleEntityExtractor().extract_text(text, title="About Cypher")
    assert [e.name for e in result] == ["Cypher", "Neo4j"]
    assert result[0].salience == 1.0 and 0 < result[1].salience < 1
    many = " ".join(f"Name{i} met." for i in range(30))
    assert len(RuleEntityExtractor(max_entities=5).extract_text(many)) == 5


def test_extract_units_and_query() -> None:
    units = [
        TextUnit(unit_id="a#0", doc_id="a", text="The STJ ruled.", title="STJ"),
        TextUnit(unit_id="b#0", doc_id="b", text="nothing here"),
    ]
    out = RuleEntityExtractor()(units)
    assert [e.name for e in out["a#0"]] == ["STJ"] and out["b#0"] == []
    assert entities_in_query("what did the STJ say about Neo4j?") == ["STJ", "Neo4j"]


class Scripted(CustomLLM):
    """An LLM that always answers the same text (a local stand-in for a real model)."""

    reply: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=False, is_function_calling_model=False)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
        return CompletionResponse(text=self.reply)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kw: Any
    ) -> Iterator[CompletionResponse]:
        yield CompletionResponse(text=self.reply)


REPLY = json.dumps(
    {
        "triplets": [
            {
                "subject": {"type": "ORG", "name": "STJ"},
                "relation": {"type": "APPLIES"},
                "object": {"type": "LAW", "name": "LGPD"},
            },
            {
                "subject": {"type": "ORG", "name": "STJ"},
                "relation": {"type": "DECIDES"},
                "object": {"type": "CONCEPT", "name": "dano moral"},
            },
        ]
    }
)
UNIT = TextUnit(unit_id="u#0", doc_id="u", text="O STJ aplicou a LGPD. O STJ viu dano moral.")


def test_llm_extractor() -> None:
    x = LLMEntityExtractor(
        Scripted(reply=REPLY),
        entity_types=["ORG", "LAW", "CONCEPT"],
        relation_types=["APPLIES", "DECIDES"],
    )
    result = x.extract(UNIT)
    assert [(e.name, e.type, e.occurrences) for e in result] == [
        ("STJ", "ORG", 2),
        ("LGPD", "LAW", 1),
        ("dano moral", "CONCEPT", 1),
    ]
    assert all(0 < e.salience <= 1 for e in result)


async def test_llm_extractor_async() -> None:
    x = LLMEntityExtractor(Scripted(reply=REPLY))
    assert [e.name for e in (await x.aextract_many([UNIT]))["u#0"]][:1] == ["STJ"]


def test_llm_extractor_garbage_reply() -> None:
    assert LLMEntityExtractor(Scripted(reply="not json")).extract(UNIT) == []


ZH_DOC = "图数据库以节点和边存储数据。Neo4j是最常见的图数据库之一，使用 Cypher 查询语言。"


def test_chinese_noun_phrases_are_entities() -> None:
    ents = RuleEntityExtractor().extract_text(ZH_DOC, title="图数据库入门")
    by_name = {e.name: e for e in ents}
    assert ents[0].name == "图数据库" and by_name["图数据库"].occurrences == 2
    assert ents[0].salience == 1.0  # most frequent, first, in the title
    assert {"Neo4j", "Cypher", "查询语言"} <= set(by_name)
    # lone two-character common nouns (数据 'data') and particles are not entities
    assert not {"数据", "节点", "的"} & set(by_name)


def test_chinese_terms_rules() -> None:
    names = found("最高人民法院在上海。向量检索很快。张伟在阿里巴巴工作，存储数据。")
    assert names["最高人民法院"] == "Organization" and names["上海"] == "Place"
    assert names["向量检索"] == "Concept"  # a verbal noun (检索) continues common nouns
    assert "阿里巴巴" in names and "阿里巴巴工作" not in names  # ...not a proper noun
    assert "存储数据" not in names and "张伟" in names


def test_han_characters_end_a_latin_phrase() -> None:
    assert "GraphRAG" in found("GraphRAG入门：用知识图谱增强检索")
    # a Latin name after Chinese text is not sentence-initial
    assert set(found("常见的系统有 Qdrant 和 Milvus。")) == {"Qdrant", "Milvus"}


def test_chinese_gazetteer_names_match_inside_han_text() -> None:
    assert found("构建知识图谱需要实体抽取。", {"知识图谱": "Concept"}) == {"知识图谱": "Concept"}


def test_chinese_query_entities() -> None:
    assert entities_in_query("图数据库") == ["图数据库"]
    assert entities_in_query("哪些图数据库支持 Cypher？") == ["图数据库", "Cypher"]


def test_an_initial_before_a_lower_case_word_is_no_entity() -> None:
    claim = "Active H. pylori urease has two subunits, UreA and UreB."
    assert entities_in_query(claim) == ["UreA", "UreB"]
    # the sentence goes on after the initial: Mayo Clinic is not sentence-initial
    assert set(found("Infected with E. coli, the Mayo Clinic said.")) == {"Mayo Clinic"}
    # a line break still ends the sentence
    assert "Hepatitis B" in found("Vaccinated against Hepatitis B.\nresults were good.")
