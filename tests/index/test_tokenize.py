"""Language-aware tokenisation."""

from __future__ import annotations

import pytest

import trilha.index.tokenize as tokenize_module
from trilha.index.tokenize import base_lang, token_set, tokenize, tokenize_query


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
