"""Language-aware tokenisation."""

from __future__ import annotations

from trilha.index.tokenize import base_lang, tokenize, tokenize_query


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
