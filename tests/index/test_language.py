"""Language detection at ingest: every loader indexes Portuguese with the Portuguese analyser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError
from trilha.index.language import detect_language, language_code, written_code
from trilha.index.tokenize import query_analysers
from trilha.ingest.chunking import chunk_document
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

SAMPLES = {
    "pt": "A distribuição de dividendos depende da decisão do conselho de administração.",
    "en": "The board decides how dividends are distributed to the shareholders.",
    "es": "La distribución de dividendos depende de la decisión del consejo.",
    "zh": "股息的分配取决于董事会的决定。",
    "fr": "La distribution des dividendes dépend de la décision du conseil.",
    "de": "Die Verteilung der Dividenden hängt von der Entscheidung des Vorstands ab.",
}


@pytest.mark.parametrize(("code", "text"), SAMPLES.items())
def test_each_language_is_detected(code: str, text: str) -> None:
    assert detect_language(text) == code


@pytest.mark.parametrize(
    ("code", "text"),
    [("pt", "Qual o prazo de prescrição?"), ("en", "statute of limitations for contracts")],
)
def test_short_questions_are_detected(code: str, text: str) -> None:
    assert detect_language(text) == code


@pytest.mark.parametrize("text", ["", "13.709/2018 42", "   ", "#!?"])
def test_text_without_words_has_no_language(text: str) -> None:
    assert detect_language(text) is None


def test_a_document_without_lang_gets_the_detected_one() -> None:
    doc = SourceDocument(doc_id="d", text=SAMPLES["pt"], source_type="beir", whole=True)
    assert chunk_document(doc)[0].lang == "pt"
    forced = chunk_document(doc, defaults={"lang": "es"})
    assert forced[0].lang == "es"  # an ingest's --lang replaces detection
    declared = SourceDocument(doc_id="d", text=SAMPLES["pt"], meta={"lang": "en"})
    assert chunk_document(declared, defaults={"lang": "es"})[0].lang == "en"  # its own word wins


def test_undetectable_text_falls_back_to_english() -> None:
    doc = SourceDocument(doc_id="d", text="42 17 2024", source_type="text")
    assert chunk_document(doc)[0].lang == "en"


@pytest.mark.parametrize("bad", ["portuguese", "p", "pt BR", "", "pt-", "PT!", "zz", "xx-BR"])
def test_bad_language_codes_are_refused_in_one_line(bad: str) -> None:
    with pytest.raises(BadRequestError, match="not a language code") as info:
        language_code(bad)
    assert "\n" not in str(info.value)


def test_beir_jsonl_in_portuguese_is_indexed_with_the_portuguese_analyser(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"_id": "a", "title": "", "text": "As distribuições de lucros para os sócios da empresa."},
        {"_id": "b", "title": "", "text": "O prazo para recorrer da sentença é de quinze dias."},
    ]
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    with Workspace.open(tmp_path / "ws", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest_path(corpus)
        assert {u.lang for u in ws.all_units()} == {"pt"}
        # pt stemming meets 'distribuição' with 'distribuições'; 'para' and 'de' are stopwords
        hits = ws.search("distribuição de lucro", top_k=2, sides=("bm25",), kg=False).hits
        assert [h.unit.doc_id for h in hits] == ["a"]
        assert "para" not in ws.searcher.lexical.query_tokens("para de")
        report = ws.ingest_path(corpus, lang="es")  # forcing another language re-indexes
        assert report.docs_updated == 2
        assert {u.lang for u in ws.all_units()} == {"es"}


@pytest.mark.parametrize("good", ["pt", "pt-BR", "en_US", "gd", "zh", "yue"])
def test_real_language_codes_are_kept(good: str) -> None:
    assert language_code(good) == good


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("PT", "pt"),
        ("pt_br", "pt-BR"),
        (" pt-br ", "pt-BR"),
        ("zh-hans", "zh-Hans"),
        ("ZH-HANS-cn", "zh-Hans-CN"),
        ("es-419", "es-419"),
        ("de-DE-1901", "de-DE-1901"),
        ("sr-latn", "sr-Latn"),
        ("POR", "pt"),
        ("por-BR", "pt-BR"),
        ("yue", "yue"),
    ],
)
def test_codes_are_written_as_bcp47_writes_them(given: str, written: str) -> None:
    assert written_code(given) == written


@pytest.mark.parametrize(
    "bad", ["pt-", "pt--BR", "pt-!!", "pt- BR", "pt-BR\U0001f642", "pt-ç", "pt-a_b", "pt-BR-x"]
)
def test_a_code_with_a_subtag_that_is_none_is_refused(bad: str) -> None:
    with pytest.raises(BadRequestError, match=f"language {bad!r} is not a language code"):
        written_code(bad)


def test_a_query_is_detected_among_its_index_languages() -> None:
    # among two languages a detection is sure when three times as likely as the other
    assert detect_language("dano moral") is None
    assert detect_language("dano moral", among=["pt", "en"]) is None  # pt 0.69, en 0.31
    assert detect_language("dano moral indenizável", among=["pt", "en"]) == "pt"
    french = SAMPLES["fr"]
    assert detect_language(french) == "fr"
    assert detect_language(french, among=["pt-BR", "en"]) in ("pt", "en", None)  # never fr
    # a language trilha does not detect among them: all eight are considered
    assert detect_language(french, among=["pt", "ja"]) == "fr"
    assert query_analysers("dano moral indenizável", ["pt", "en"]) == ["pt"]
    assert query_analysers("13.709/2018", ["pt", "en"]) == ["pt", "en"]  # no language
