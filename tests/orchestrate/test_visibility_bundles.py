"""No bundle ever holds an item its reader may not see.

A random organisation (documents, tasks, projects, OKRs and claims with random access fields,
and conversation turns of several users) is built from a seed. Every item of every bundle, and
every node a graph item links to, is checked against :func:`trilha.access.visible` on the access
fields the test itself wrote (not on what the bundle says); turns and past retrievals must be
the reader's own.

* ``make test``: hypothesis draws a corpus (one of :data:`CORPORA`, small), a principal, a
  question and a depth, :data:`EXAMPLES` times;
* ``make check`` (marked ``sweep``): 10,000 cases, 200 random principals each asking 10
  questions (every intent) at every depth D0–D4 over one full-size organisation.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.access.test_policy import ORGS, PROJECTS, ROLES, USERS, _meta
from trilha.access import Principal
from trilha.access.policy import Access, visible
from trilha.config import DEPTH_LEVELS, DepthLevel
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.orchestrate import ContextBundle, Orchestrator, RetrievalRequest
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

from .conftest import NOW

OWNERS = USERS
WORDS = "vpn orçamento incidente tarefa projeto contrato auditoria prazo política remote budget"
QUESTIONS = [
    "Qual o prazo para reportar um incidente de segurança?",
    "Quais tarefas da minha startup estão atrasadas?",
    "O que deveríamos priorizar esta semana?",
    "Quem é responsável pelo projeto atlas?",
    "Como o projeto atlas se relaciona com a auditoria?",
    "What should I do next?",
    "Which tasks are overdue for our team?",
    "What are our OKRs for the budget?",
    "How do I request a new VPN token?",
    "What does the policy say about remote work?",
]
PRINCIPALS = 200
#: Seeds of the small organisations the property test draws from, and its examples.
CORPORA = (7, 2026)
EXAMPLES = 60
#: The size of an organisation: documents, tasks, OKRs, claims.
FULL = (60, 40, 8, 15)
SMALL = (16, 12, 4, 6)


def principal(rng: np.random.Generator, n: int) -> Principal:
    """A random principal; the first ones are the owners of items, the rest strangers."""
    pick = lambda pool: sorted({str(x) for x in rng.choice(pool, size=int(rng.integers(0, 3)))})  # noqa: E731
    return Principal(
        user_id=OWNERS[n] if n < len(OWNERS) else f"p{n}",
        org_ids=pick(ORGS),
        project_ids=pick(PROJECTS),
        roles=pick(ROLES),
        hierarchy_level=int(rng.integers(0, 4)),
        clearance=int(rng.integers(0, 4)),
    )


def records(
    rng: np.random.Generator, tasks: int, okrs: int, claims: int
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Graph records of a random organisation, and the access fields of every node by id."""
    words = WORDS.split()
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for i in range(6):
        nodes.append(_node("Project", f"p{i}", rng, title=f"projeto {words[i]} atlas"))
    for i in range(tasks):
        status = str(rng.choice(["open", "late", "done", "doing"]))
        due = f"2026-{int(rng.integers(9, 13)):02d}-{int(rng.integers(1, 28)):02d}"
        prio = {"priority_node": True} if rng.random() < 0.2 else {}
        title = f"tarefa {' '.join(rng.choice(words, 2))}"
        nodes.append(_node("Task", f"t{i}", rng, title=title, status=status, due_date=due, **prio))
        edges.append(_edge("BELONGS_TO", f"Task:t{i}", f"Project:p{int(rng.integers(0, 6))}"))
    for i in range(okrs):
        end = str(rng.choice(["2025-12-31", "2026-12-31"]))
        nodes.append(
            _node(
                "OKR", f"o{i}", rng, title=f"okr {words[i]}", valid_from="2025-01-01", valid_to=end
            )
        )
        edges.append(_edge("ALIGNS_WITH", f"Task:t{i}", f"OKR:o{i}"))
    for i in range(claims):
        text = f"claim sobre {' '.join(rng.choice(words, 3))} prazo"
        nodes.append(_node("Claim", f"c{i}", rng, text=text, confidence=0.5 + i / 40))
    fields = {f"{n['label']}:{n['id']}": n["props"] for n in nodes}
    return nodes + edges, fields


def _node(label: str, node_id: str, rng: np.random.Generator, **props: Any) -> dict[str, Any]:
    return {"kind": "node", "label": label, "id": node_id, "props": {**props, **_meta(rng)}}


def _edge(rel: str, source: str, target: str) -> dict[str, Any]:
    return {"kind": "edge", "type": rel, "source": source, "target": target}


def build_world(
    folder: Path,
    embedder: SentenceTransformerEmbedder,
    seed: int,
    size: tuple[int, int, int, int],
    principals: int,
) -> World:
    """A random organisation of ``size`` (documents, tasks, OKRs, claims) from ``seed``, with
    ``principals`` random principals (the first ones :data:`OWNERS`), each owner's turns."""
    rng = np.random.default_rng(seed)
    ws = Workspace.open(
        folder / "ws", TrilhaSettings(graph_backend="falkordb"), embedder=embedder, create=True
    )
    words = WORDS.split()
    docs = [
        SourceDocument(
            doc_id=f"d{i}",
            text=" ".join(rng.choice(words, size=12)) + f" nota {i}",
            source_type="text",
            meta={**_meta(rng), "lang": "pt"},
        )
        for i in range(size[0])
    ]
    ws.ingest(docs)
    recs, fields = records(rng, *size[1:])
    path = folder / "records.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in recs), encoding="utf-8")
    ws.ingest_records(path)
    directory = {p.user_id or "": p for p in (principal(rng, n) for n in range(principals))}
    orch = Orchestrator(ws, principals=directory, clock=lambda: NOW)
    for n, owner in enumerate(OWNERS):
        for turn in range(3):
            made = orch.memory.record_turn(
                owner, f"c-{owner}-{turn % 2}", "user", f"{words[n]} {turn}"
            )
            fields[f"Turn:{made.turn_id}"] = {"visibility": "private", "owner_id": owner}
    return World(orch, directory, fields)


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[World]:
    """The full-size organisation of the sweep."""
    built = build_world(tmp_path_factory.mktemp("leaks"), embedder, 2026, FULL, PRINCIPALS)
    yield built
    built.orch.workspace.close()


@pytest.fixture(scope="module")
def small_worlds(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[dict[int, World]]:
    """The small organisations of :data:`CORPORA`, by seed."""
    worlds = {
        seed: build_world(tmp_path_factory.mktemp(f"leaks-{seed}"), embedder, seed, SMALL, 0)
        for seed in CORPORA
    }
    yield worlds
    for built in worlds.values():
        built.orch.workspace.close()


@dataclass(frozen=True)
class World:
    """The orchestrator, its principals, and the access fields the test wrote, by item id."""

    orch: Orchestrator
    directory: dict[str, Principal]
    fields: dict[str, dict[str, Any]]


def leaks(bundle: ContextBundle, reader: Principal, world: World) -> list[str]:
    """Every item of ``bundle`` (and node it links to) that ``reader`` may not see."""
    orch, fields = world.orch, world.fields
    own_jobs = {f"RetrievalJob:{j.id}" for j in orch.jobs.recent(reader.user_id or "", 50)}
    found = []
    for item in bundle.context_items:
        if item.item_type == "chunk":
            unit_id = item.citation.unit_id or ""
            unit = orch.workspace.units([unit_id])[unit_id]
            ok = visible(Access(**unit.model_dump(include=set(Access.model_fields))), reader)
        elif item.item_type == "job":
            ok = item.item_id in own_jobs
        else:
            ok = visible(Access(**fields[item.item_id]), reader)
            for link in item.metadata.get("links", []):
                if link["other_id"] in fields:
                    ok = ok and visible(Access(**fields[link["other_id"]]), reader)
        if not ok:
            found.append(item.item_id)
    return found


#: Random principals: the owners of items and turns, or a stranger, with random access fields.
readers = st.builds(
    Principal,
    user_id=st.sampled_from([*OWNERS, "stranger"]),
    org_ids=st.lists(st.sampled_from(ORGS), max_size=2, unique=True),
    project_ids=st.lists(st.sampled_from(PROJECTS), max_size=2, unique=True),
    roles=st.lists(st.sampled_from(ROLES), max_size=2, unique=True),
    hierarchy_level=st.integers(0, 4),
    clearance=st.integers(0, 4),
)


#: A reader whose bundle for the first question at D3 holds a claim (corpus 7): so every run of
#: the drawn test meets all three sources, whatever hypothesis draws.
CLAIM_READER = Principal(
    user_id="ana",
    org_ids=["acme", "beta"],
    project_ids=["atlas", "zeus"],
    roles=["board", "it"],
    hierarchy_level=4,
    clearance=4,
)


def test_no_bundle_holds_an_item_its_reader_may_not_see_drawn(
    small_worlds: dict[int, World],
) -> None:
    seen: set[str] = set()

    @settings(max_examples=EXAMPLES, deadline=None)
    @example(seed=7, reader=CLAIM_READER, question=QUESTIONS[0], depth="D3")  # meets a claim
    @given(
        seed=st.sampled_from(CORPORA),
        reader=readers,
        question=st.sampled_from(QUESTIONS),
        depth=st.sampled_from(DEPTH_LEVELS),
    )
    def check(seed: int, reader: Principal, question: str, depth: DepthLevel) -> None:
        world = small_worlds[seed]
        world.directory[reader.user_id or ""] = reader  # the orchestrator reads this mapping
        request = RetrievalRequest(
            user_id=reader.user_id, conversation_id="conv", raw_query=question, depth=depth
        )
        bundle = world.orch.retrieve(request)
        assert not leaks(bundle, reader, world), (seed, reader, question, depth)
        seen.update(i.item_type for i in bundle.context_items)

    check()
    assert {"chunk", "Task", "Claim"} <= seen  # every source was exercised


@pytest.mark.sweep
def test_no_bundle_holds_an_item_its_reader_may_not_see(world: World) -> None:
    readers = list(world.directory.values())
    cases = list(itertools.product(readers, QUESTIONS, DEPTH_LEVELS))
    cases = cases[: int(os.environ.get("LEAK_CASES", len(cases)))]
    assert len(cases) >= 10_000 or "LEAK_CASES" in os.environ
    seen: set[str] = set()
    for reader, question, depth in cases:
        request = RetrievalRequest(
            user_id=reader.user_id, conversation_id="conv", raw_query=question, depth=depth
        )
        bundle = world.orch.retrieve(request)
        assert not leaks(bundle, reader, world), (reader, question, depth)
        seen |= {i.item_type for i in bundle.context_items}
    assert {"chunk", "Task", "Claim", "turn"} <= seen  # every source was exercised
