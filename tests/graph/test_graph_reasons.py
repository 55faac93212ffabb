"""Top-N reasons as pure functions: template language, cap, shortened names, ISO dates."""

from __future__ import annotations

import pytest

from trilha.errors import BadRequestError
from trilha.graph.read.ranking import DocEvidence, reasons, template_lang
from trilha.graph.read.results import iso_utc

LONG = "Quarta Turma do Superior Tribunal de Justiça"


def evidence() -> DocEvidence:
    return DocEvidence(
        "zh/guide/a",
        "GraphRAG 入门",
        "2024-05-20T12:00:00+08:00",
        direct={"GraphRAG": 0.92, LONG: 0.4},
        related={("GraphRAG", "Neo4j"): (0.73, 0.5)},
        categories={"guide": "guide"},
    )


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "zh",
            [
                "包含实体 GraphRAG（salience 0.92）（另有 2 项）",
                "最近更新：2024-05-20",
                "分类匹配 guide",
            ],
        ),
        (
            "pt",
            [
                "menciona a entidade GraphRAG (saliência 0.92) (+2 outras)",
                "atualizado em 2024-05-20",
                "categoria corresponde: guide",
            ],
        ),
        (
            "en",
            [
                "mentions entity GraphRAG (salience 0.92) (+2 more)",
                "updated 2024-05-20",
                "category match: guide",
            ],
        ),
    ],
)
def test_reasons_are_capped_in_the_template_language(lang: str, expected: list[str]) -> None:
    assert reasons(evidence(), "guide", lang) == expected


def test_reasons_fill_free_places_with_entity_links_and_shorten_names() -> None:
    ev = evidence()
    ev.updated_at = None
    assert reasons(ev, None, "en") == [
        "mentions entity GraphRAG (salience 0.92)",
        "mentions entity Quarta Turma do Superio… (salience 0.40)",
        "related to GraphRAG via Neo4j (weight 0.73)",
    ]
    assert reasons(DocEvidence("d"), None, "zh") == []


def test_template_language() -> None:
    assert [template_lang(x) for x in ("zh-CN", "PT_br", " en ")] == ["zh", "pt", "en"]
    with pytest.raises(BadRequestError, match="template language 'fr' is not available"):
        template_lang("fr")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-20", "2024-05-20T00:00:00Z"),
        ("2024-05-20T12:00:00Z", "2024-05-20T12:00:00Z"),
        ("2024-05-20T02:00:00+08:00", "2024-05-19T18:00:00Z"),
        ("2024-05-20 12:00:00.5", "2024-05-20T12:00:00Z"),
        ("not a date", "not a date"),
        (None, None),
    ],
)
def test_iso_utc(value: str | None, expected: str | None) -> None:
    assert iso_utc(value) == expected
