"""A few documents in another language (misdetected, bilingual, declared) cannot take over BM25
(issue 30, item 11): their kept stopwords are no query terms, and an unsure detection takes the
collection's main language."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.index.language import document_language
from trilha.index.tokenize import tokenize, tokenize_query
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

DRUGS = ("aspirin", "insulin", "statin", "vaccine", "cortisol")
DRUGS += ("dopamine", "serotonin", "melatonin", "ketamine", "lithium")
ORGANS = (
    "heart",
    "liver",
    "kidney",
    "brain",
    "lung",
    "muscle",
    "bone",
    "skin",
    "retina",
    "pancreas",
)
#: Full of English stopwords and nothing else a query asks for.
STOPWORD_NOTE = (
    "This is one of the notes that were written by the staff on the day of the visit to the "
    "site, and it is in the files of the office. It was put there by the head of the unit, "
    "as all of the notes of the visits are, and then the rest of the staff read it."
)
#: Read as Spanish (0.67) by the detector: an English sentence after Spanish affiliations.
BILINGUAL = (
    "Los Alamos National Laboratory, Universidad de Buenos Aires; Departamento de Física. "
    "The data are consistent with the model."
)
GERMAN = (
    "Die Verteilung der Dividenden hängt von der Entscheidung des Vorstands ab. "
    "Der Vorstand entscheidet jedes Jahr neu."
)


def english_docs() -> list[SourceDocument]:
    """50 short English abstracts, five on each of ten (drug, organ) pairs."""
    docs = []
    for i in range(50):
        a, b = DRUGS[i % 10], ORGANS[(i * 3) % 10]
        text = (
            f"The effect of {a} on the {b} was studied in {20 + i} patients. We found that "
            f"{a} changes the function of the {b} and that the change is seen by imaging."
        )
        docs.append(SourceDocument(doc_id=f"en-{i:02d}", text=text, source_type="text"))
    return docs


@pytest.fixture(scope="module")
def mixed_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """The 50 English abstracts, the stopword note declared French, the bilingual page, a
    German note and the bilingual page again declared Spanish, in one ingest."""
    docs = [
        *english_docs(),
        SourceDocument(doc_id="note-fr", text=STOPWORD_NOTE, meta={"lang": "fr"}),
        SourceDocument(doc_id="bilingual", text=BILINGUAL, source_type="text"),
        SourceDocument(doc_id="german", text=GERMAN, source_type="text"),
        SourceDocument(doc_id="declared-es", text=BILINGUAL, meta={"lang": "es"}),
    ]
    path = tmp_path_factory.mktemp("misdetected") / "ws"
    with Workspace.open(path, TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(docs)
        yield ws


def test_a_document_stored_in_another_language_is_not_every_query_s_top_hit(
    mixed_ws: Workspace,
) -> None:
    assert mixed_ws.store.get(["note-fr#0"])["note-fr#0"].lang == "fr"  # declared: kept
    for query, (a, b) in (
        ("the effect of insulin on the brain", ("insulin", "brain")),
        ("what is the function of dopamine in the muscle", ("dopamine", "muscle")),
    ):
        about = {d.doc_id for d in english_docs() if a in d.text and b in d.text}
        hits = mixed_ws.search(query, top_k=len(about), sides=("bm25",), kg=False).hits
        assert hits[0].unit.doc_id != "note-fr"
        assert len(about) == 5 and {h.unit.doc_id for h in hits} == about


def test_an_unsure_detection_takes_the_collection_s_main_language(mixed_ws: Workspace) -> None:
    langs = {u.doc_id: u.lang for u in mixed_ws.all_units()}
    assert langs["bilingual"] == "en"  # detected es, 0.67 sure, in an English collection
    assert langs["german"] == "de"  # sure of itself: kept
    assert langs["declared-es"] == "es"  # declared: kept as given
    assert {langs[f"en-{i:02d}"] for i in range(50)} == {"en"}


def test_document_language_falls_back_only_when_unsure() -> None:
    assert document_language(BILINGUAL) == "es"  # no collection yet: the detector's word
    assert document_language(BILINGUAL, "en") == "en"
    assert document_language(BILINGUAL, "es") == "es"
    assert document_language(BILINGUAL, "pt-BR") == "pt-BR"
    assert document_language(GERMAN, "en") == "de"
    assert document_language("42 17 2024", "pt") == "pt"  # no language at all
    # a short English note reads en 0.85 and pt 0.00: pt is no reading of it, en is kept
    assert document_language("Remote access requires the corporate VPN and a token.", "pt") == "en"
    # the same note in an English collection, and a German one sure of itself
    assert document_language("Remote access requires the corporate VPN and a token.", "en") == "en"
    assert document_language("42 17 2024") == "en"


def test_query_drops_the_stopwords_of_every_language_it_is_analysed_with() -> None:
    # 'dano moral' is undetectable: analysed as en and pt, without either's stopwords
    assert tokenize_query("the dano moral de", ["en", "pt"]) == tokenize("dano moral", "en") + [
        t for t in tokenize("dano moral", "pt") if t not in tokenize("dano moral", "en")
    ]
    # a sure English query is analysed in English alone: no fr stems ('cel'), 'the' dropped
    query = "The cells of the immune system respond to the infection"
    assert tokenize_query(query, ["en", "fr", "de"]) == tokenize(query, "en")
    # a sure Portuguese query in a mostly English index: en and pt, neither's stopwords
    pt_query = "Qual é o prazo de prescrição da ação de cobrança?"
    tokens = tokenize_query(pt_query, ["en", "fr", "pt"])
    assert not {"qual", "de", "da", "o"} & set(tokens)
    assert set(tokenize(pt_query, "pt")) <= set(tokens)
