"""Portuguese preparation before stemming: numbers, citations, ordinals, -ão plurals."""

from __future__ import annotations

import pytest

from trilha.errors import ConfigurationError
from trilha.index.tokenize import default_preparer, load_rules, tokenize


def test_law_number_is_one_token_however_it_is_cited() -> None:
    expected = ["lei", "13709", "2018"]
    assert tokenize("Lei 13.709/2018", "pt") == expected
    assert tokenize("Lei nº 13.709, de 2018", "pt") == expected
    assert tokenize("Lei n.º 13.709, de 2018", "pt") == expected
    assert tokenize("LEI Nº 13.709/2018", "pt") == expected


def test_thousands_dots_join_but_decimals_and_dates_do_not() -> None:
    assert tokenize("REsp 1.234.567/SP", "pt") == ["resp", "1234567", "sp"]
    assert tokenize("R$ 1.500,00", "pt") == ["1500", "00"]
    assert tokenize("25.03.2025", "pt") == ["25", "03", "2025"]


def test_article_citations_meet_in_both_spellings() -> None:
    short = tokenize("art. 206 §5º CC", "pt")
    long = tokenize("artigo 206, § 5º, do Código Civil", "pt")
    assert short == ["art", "206", "5o", "cc"]
    assert long == ["art", "206", "5o", "codig", "civil"]
    assert tokenize("arts. 5º e 6º", "pt") == ["art", "5o", "6o"]


def test_ordinal_indicators_are_unified() -> None:
    assert tokenize("5º", "pt") == tokenize("5°", "pt") == tokenize("5ª", "pt") == ["5o"]
    assert tokenize("1ª Turma", "pt") == ["1o", "turm"]


def test_abbreviations_stay_as_written() -> None:
    assert tokenize("AgInt no AgRg no REsp, STJ e STF", "pt") == [
        "agint",
        "agrg",
        "resp",
        "stj",
        "stf",
    ]


@pytest.mark.parametrize(
    ("plural", "singular"),
    [("decisões", "decisão"), ("prescrições", "prescrição"), ("capitães", "capitão")],
)
def test_ao_plurals_stem_with_their_singular(plural: str, singular: str) -> None:
    assert tokenize(plural, "pt") == tokenize(singular, "pt")
    assert tokenize(plural.upper(), "pt") == tokenize(singular, "pt")


def test_plurals_typed_without_accents_meet_the_accented_forms() -> None:
    assert tokenize("decisoes", "pt") == tokenize("decisão", "pt") == tokenize("decisao", "pt")


def test_snowball_stems_the_rest() -> None:
    assert tokenize("recursos especiais julgados", "pt") == ["recurs", "espec", "julg"]


def test_words_keep_their_order_and_length() -> None:
    prepare = default_preparer()
    assert prepare.words(["artigos", "decisões", "prazo"]) == ["art", "decisão", "prazo"]


def test_english_text_is_not_prepared() -> None:
    # numbers and ordinals are Portuguese conventions; English keeps bm25s' analysis
    assert tokenize("Lei 13.709/2018 article 5° decisions", "en") == [
        "lei",
        "13",
        "709",
        "2018",
        "articl",
        "decis",
    ]


def test_a_bad_rules_file_is_one_line() -> None:
    with pytest.raises(ConfigurationError, match=r"^rules.yaml: .*ordinal_marks") as info:
        load_rules(
            "number_markers: []\nordinal_marks: []\nword_forms: {}\nao_plurals: {}\n", "rules.yaml"
        )
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigurationError, match="not valid YAML"):
        load_rules("number_markers: [", "rules.yaml")
