"""Language-aware tokenisation."""

from __future__ import annotations

import pytest

import trilha.index.tokenize as tokenize_module
from trilha.index.tokenize import (
    base_lang,
    query_analysers,
    query_language,
    query_language_among,
    token_set,
    tokenize,
    tokenize_query,
)


def test_english_matches_bm25s_defaults() -> None:
    # stopwords removed, stemmed, one-letter tokens dropped
    assert tokenize("The cells are dividing in a culture", "en") == ["cell", "divid", "cultur"]


def test_portuguese_stems_and_folds_accents() -> None:
    assert tokenize("As decisões sobre prescrição", "pt") == tokenize(
        "decisoes sobre prescricao", "pt"
    )
    assert tokenize("para uma de", "pt") == []  # stopwords


def test_base_lang() -> None:
    assert base_lang("pt-BR") == "pt"
    assert base_lang(None) == "en"
    assert base_lang("xx") == "en"


def test_query_tokens_keep_first_language_multiplicity_and_add_others_once() -> None:
    toks = tokenize_query("prazo prazo deadlines", ["en", "pt"])
    assert toks[:3] == tokenize("prazo prazo deadlines", "en")
    assert len(toks) == len(set(toks[2:])) + 2
    assert tokenize_query("cells", ["en"]) == ["cell"]


#: Queries of every kind: sure pt and en questions, unsure phrases ('the dano moral de'), ids.
QUERIES = (
    "Qual é o prazo de prescrição da ação de cobrança?",
    "The cells of the immune system respond to the infection",
    "the dano moral de",
    "orçamento de TI",
    "VPN laptop",
    "prazo prazo deadlines",
    "LGPD 13.709/2018",
)


@pytest.mark.parametrize("langs", [["pt", "en"], ["en", "pt"], ["en", "fr", "de"], ["en"]])
def test_held_query_tokens_are_those_of_the_detected_language(langs: list[str]) -> None:
    # an index holding every token either analysis gives, one holding some, one holding none
    for query in QUERIES:
        every = {t for lang in langs for t in tokenize(query, lang)} | {"de", "the", "o"}
        for held in (every, {t for t in every if len(t) % 2}, set()):
            detected = [t for t in tokenize_query(query, langs) if t in held]
            assert tokenize_query(query, langs, held.__contains__) == detected, (query, held)


def test_the_language_is_not_detected_where_it_cannot_change_the_held_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held = {"vpn", "laptop", "orcament", "ti"}  # pt stems: the en analysis adds no held token
    expected = {q: tokenize_query(q, ["pt", "en"], held.__contains__) for q in QUERIES[3:5]}

    def no_detection(text: str, among: object = None) -> str:
        raise AssertionError(f"{text!r} was run through the detector")

    monkeypatch.setattr(tokenize_module, "detect_language", no_detection)
    for query, tokens in expected.items():
        assert tokenize_query(query, ["pt", "en"], held.__contains__) == tokens
    assert expected["orçamento de TI"] == ["orcament", "ti"]
    # a held token only the en analysis gives ('orcamento'): the detector decides
    with pytest.raises(AssertionError, match="detector"):
        tokenize_query("orçamento de TI", ["pt", "en"], (held | {"orcamento"}).__contains__)


GRAPH_DB_DOC = "图数据库以节点和边存储数据，Neo4j是最常见的图数据库之一。"


def test_han_runs_are_segmented_whatever_the_language() -> None:
    for lang in ("en", "pt", "zh", None):
        toks = tokenize(GRAPH_DB_DOC, lang)
        assert {"图", "数据库", "节点", "存储", "neo4j"} <= set(toks)
        assert "的" not in toks and "和" not in toks  # particles
        assert toks.count("数据库") == 2  # BM25 multiplicity kept


def test_han_query_meets_the_document_that_contains_it() -> None:
    doc = set(tokenize(GRAPH_DB_DOC, "en"))
    query = tokenize_query("图数据库", ["en", "pt"])
    assert query and set(query) <= doc
    # search mode also yields the dictionary words inside a longer word
    assert "数据库" in tokenize("数据库系统", "en")


def test_text_without_han_is_tokenised_as_before() -> None:
    assert tokenize("Neo4j stores graphs", "en") == ["neo4j", "store", "graph"]


ENGLISH = (
    "Running analyses of 1,234 cells showed the proteins were binding to receptors; "
    "results from 2.5 mg/kg doses are in Section 3.1 of the supplement."
)


def test_english_analysis_is_bm25s_default_analysis() -> None:
    import bm25s
    import Stemmer

    expected = bm25s.tokenize(
        ENGLISH, stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=False
    )[0]
    assert tokenize(ENGLISH, "en") == expected


def test_token_set_is_the_set_of_tokenize() -> None:
    texts = [
        "The Running runners ran; café naïve résumé dogs.",
        "Decisões do STJ sobre o art. 206 §5º do CC e a Lei 13.709/2018.",
        "图数据库 stores graphs",
        "",
    ]
    for lang in ("en", "pt", "es", None):
        for text in texts:
            assert token_set(text, lang) == frozenset(tokenize(text, lang))


def test_token_set_memo_starts_again_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenize_module, "_MEMO_WORDS", 2)
    first = token_set("alpha beta gamma delta", "en")
    assert token_set("alpha beta gamma delta epsilon", "en") == first | {"epsilon"}
    assert len(tokenize_module._MEMO["en"]) == 5  # the full memo was replaced, then filled


def test_a_query_with_one_languages_stopwords_is_told_without_the_detector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_detection(text: str, min_confidence: float = 0.5, among: object = None) -> str:
        raise AssertionError(f"{text!r} was run through the detector")

    monkeypatch.setattr(tokenize_module, "detect_language", no_detection)
    assert query_language_among("what does the court say about contracts", ["pt", "en"]) == "en"
    assert query_language_among("O que diz a Tese de Church-Turing?", ["pt", "en"]) == "pt"
    assert query_analysers("what is the deadline for the appeal", ["pt", "en"]) == ["pt", "en"]
    assert query_analysers("qual é o prazo para o recurso", ["pt", "en"]) == ["pt"]
    assert query_language("qual é o prazo para o recurso", ["en", "pt"]) == "pt"
    # one stopword, or both languages' (the and o): the detector decides
    for undecided in ("dano moral", "prazo of the recurso o a"):
        with pytest.raises(AssertionError, match="detector"):
            query_language_among(undecided, ["pt", "en"])
