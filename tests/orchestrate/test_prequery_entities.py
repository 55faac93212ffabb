"""Named graph nodes a question mentions, only among those the asker may see (REQ-RETR-011)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

import pytest

from trilha.access import Principal
from trilha.errors import BackendUnavailableError
from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.records import loads_records
from trilha.graph.build.writer import GraphWriter
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.orchestrate.prequery import FocusEntity, GraphEntityFinder, prequery
from trilha.orchestrate.prequery.entities import ngrams
from trilha.types import TextUnit

NOW = datetime.fromisoformat("2025-06-11T09:30:00-03:00")
ANA = Principal(user_id="ana")
ACME = Principal(user_id="bob", org_ids=["acme"])

RECORDS = [
    {"kind": "node", "label": "Project", "id": "p-atlas", "props": {"title": "Atlas"}},
    {
        "kind": "node",
        "label": "Project",
        "id": "p-fenix",
        "props": {"title": "Fênix", "visibility": "private", "owner_id": "ana"},
    },
    {
        "kind": "node",
        "label": "Task",
        "id": "t-basel",
        "props": {"title": "Revisar contrato", "visibility": "org", "org_id": "acme"},
    },
    {"kind": "node", "label": "User", "id": "u-ana", "props": {"name": "Ana Souza"}},
    {"kind": "node", "label": "Entity", "id": "Basel III", "props": {"type": "Law"}},
    {"kind": "edge", "type": "REFERENCES", "source": "Task:t-basel", "target": "Entity:Basel III"},
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FalkorDBStore]:
    s = FalkorDBStore.embedded(tmp_path_factory.mktemp("prequery") / "falkordb")
    units = [
        TextUnit(unit_id="pub#0", doc_id="pub", text="A LGPD e o projeto Atlas.", ordinal=0),
        TextUnit(
            unit_id="sec#0",
            doc_id="sec",
            text="Orion, o fornecedor secreto.",
            ordinal=0,
            visibility="private",
            owner_id="ana",
        ),
    ]
    writer = GraphWriter(s)
    writer.upsert_units(
        units,
        {
            "pub#0": [ExtractedEntity("LGPD", "Law", 0.9)],
            "sec#0": [ExtractedEntity("Orion", "Org", 0.8)],
        },
    )
    writer.write_records(loads_records("\n".join(json.dumps(r) for r in RECORDS)))
    yield s
    s.close()


def ids(found: list[FocusEntity]) -> list[str | None]:
    return [e.node_id for e in found]


def test_named_and_titled_nodes_in_question_order(store: FalkorDBStore) -> None:
    found = GraphEntityFinder(store, None).find("Como o projeto Atlas se relaciona com a LGPD?")
    assert ids(found) == ["Project:p-atlas", "Entity:LGPD"]
    assert [(e.label, e.name) for e in found] == [("Project", "Atlas"), ("Entity", "LGPD")]


def test_hidden_names_are_never_found(store: FalkorDBStore) -> None:
    question = "O que o projeto Fênix tem a ver com a Orion e Basel III?"
    assert GraphEntityFinder(store, None).find(question) == []
    assert ids(GraphEntityFinder(store, ACME).find(question)) == ["Entity:Basel III"]
    assert ids(GraphEntityFinder(store, ANA).find(question)) == [
        "Project:p-fenix",
        "Entity:Orion",
    ]


def test_titles_match_without_accents_or_case_but_as_whole_words(store: FalkorDBStore) -> None:
    finder = GraphEntityFinder(store, ANA)
    assert ids(finder.find("status do PROJETO FENIX?")) == ["Project:p-fenix"]
    assert finder.find("the atlases of the world") == []
    assert ids(finder.find("Who is ana souza?")) == ["User:u-ana"]


def test_prequery_puts_named_nodes_before_the_labels_they_cover(store: FalkorDBStore) -> None:
    finder = GraphEntityFinder(store, None)
    out = prequery("Quais tarefas do projeto Atlas estão atrasadas?", now=NOW, entities=finder)
    focus = [(e.label, e.node_id) for e in out.result.focus_entities]
    assert focus == [("Project", "Project:p-atlas"), ("Task", None)]
    last = out.trace.stages[-1]
    assert last.name == "entities" and last.note == "1 named node(s)"


class _Down:
    def find(self, text: str) -> list[FocusEntity]:
        raise BackendUnavailableError("graph down")


def test_a_failing_finder_leaves_the_labels_and_says_so() -> None:
    out = prequery("Quais tarefas estão atrasadas?", now=NOW, entities=_Down())
    assert [e.label for e in out.result.focus_entities] == ["Task"]
    assert out.trace.stages[-1].note == "graph down; no named nodes"


def test_ngrams_are_normalised_names_up_to_six_words() -> None:
    grams = ngrams("Política  de LGPD")
    assert "política de lgpd" in grams and "lgpd" in grams and len(grams) == 6
    assert max(len(g.split()) for g in ngrams("a b c d e f g h")) == 6


def test_a_question_without_words_looks_nothing_up(store: FalkorDBStore) -> None:
    assert ngrams("?!") == []
    assert GraphEntityFinder(store, ANA).find("?!") == []
