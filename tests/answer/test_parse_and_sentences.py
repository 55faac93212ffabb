"""ParseQuery's normalisation and explicit filters; sentence splitting."""

from __future__ import annotations

import pytest

from trilha.answer.parse import MAX_QUESTION_CHARS, parse_question
from trilha.answer.sentences import split_sentences

KNOWN = {"setor": ["TI", "Financeiro", "Jurídico"], "tema": ["trabalho remoto", "compras"]}


@pytest.mark.parametrize(
    ("question", "filters"),
    [
        ("Quais decisões saíram em 2021?", {"data_inicio": "2021-01-01", "data_fim": "2021-12-31"}),
        ("What changed since 2019?", {"data_inicio": "2019-01-01"}),
        ("Normas até 2020 sobre férias", {"data_fim": "2020-12-31"}),
        ("Quais regras do setor de TI valem?", {"setor": "TI"}),
        ("Who signs off in the Financeiro department?", {"setor": "Financeiro"}),
        ("Políticas com tema trabalho remoto", {"tema": "trabalho remoto"}),
        ("Resumo da decisão em português", {"lang": "pt"}),
        ("Summaries in English about delays", {"lang": "en"}),
        ("setor juridico: prazo prescricional", {"setor": "Jurídico"}),
    ],
)
def test_explicit_filters_are_read(question: str, filters: dict[str, str]) -> None:
    parsed = parse_question(question, KNOWN)
    assert parsed.valid and parsed.filters == filters


@pytest.mark.parametrize(
    "question",
    [
        "Lei nº 13.709, de 2018: o que diz sobre dados?",
        "Qual o prazo do art. 206 §5º CC?",
        "Quais são as regras do trabalho remoto?",  # the tema, but not named as one
        "Quem cuida de TI?",
        "O setor de Marketing aprova isso?",  # not a value the caller can see
    ],
)
def test_ordinary_questions_are_not_narrowed(question: str) -> None:
    assert parse_question(question, KNOWN).filters == {}


def test_normalised_and_validated() -> None:
    parsed = parse_question("  Qual\u0301 o\tprazo?\x00  ", KNOWN)
    assert parsed.valid and parsed.text == "Quaĺ o prazo?"
    for bad in ("", "   ", "?!…", "\x00\x01"):
        p = parse_question(bad)
        assert not p.valid and p.reason and "no words" in p.reason
    long = parse_question("a" * (MAX_QUESTION_CHARS + 1))
    assert not long.valid and long.reason and "shorten" in long.reason


def test_since_after_until_is_no_filter() -> None:
    assert parse_question("since 2022 until 2020", KNOWN).filters == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "O prazo é de cinco anos (art. 206, §5º, do CC). Segundo o Dr. Silva, vale. Sim?",
            [
                "O prazo é de cinco anos (art. 206, §5º, do CC).",
                "Segundo o Dr. Silva, vale.",
                "Sim?",
            ],
        ),
        (
            "# Título\n- item um. Item dois\n1. Passo.",
            ["Título", "item um.", "Item dois", "Passo."],
        ),
        ("Requisitos: - Ter um ano. - Ter VPN.", ["Requisitos:", "Ter um ano.", "Ter VPN."]),
        ('Ele disse "Pare." Depois saiu.', ['Ele disse "Pare."', "Depois saiu."]),
        ("这是第一句。这是第二句！第三句", ["这是第一句。", "这是第二句！", "第三句"]),
        (
            "o candidato deve ir. o pedido (art. 5) vale. e.g. isto.",
            ["o candidato deve ir.", "o pedido (art. 5) vale.", "e.g. isto."],
        ),
        ("", []),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected
