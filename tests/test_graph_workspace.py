"""The graph inside a workspace: KG boost in search, degradation, tools, postprocessor, CLI."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest

from tests.conftest import READER, SAMPLES, make_docs, open_legal
from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError, ConfigurationError
from trilha.graph.stores import bolt
from trilha.ingest.loaders import SourceDocument, load_path
from trilha.llamaindex import KnowledgeGraphBoost, TrilhaRetriever
from trilha.llamaindex.tools import graph_tools
from trilha.settings import TrilhaSettings
from trilha.testing.copying import copy_workspace
from trilha.workspace import Workspace

RECORDS = Path(str(files("trilha.samples") / "graph" / "records.jsonl"))
PRINCIPALS = Path(str(files("trilha.samples") / "principals.yaml"))
DEBT = "juridico/stj-prescricao-quinquenal-cobranca"


@pytest.fixture(scope="module")
def legal_template(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Path:
    """The session's ``legal_ws`` (tests/conftest.py) built again once for the module, and
    closed: each test that writes works on a copy of its own."""
    folder = tmp_path_factory.mktemp("legal-template") / "ws"
    open_legal(folder, embedder).close()
    return folder


@pytest.fixture()
def own_legal_ws(
    legal_template: Path, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """A copy of :func:`legal_template` of its own, for a test that writes."""
    copy_workspace(legal_template, tmp_path / "ws")
    ws = Workspace.open(tmp_path / "ws", TrilhaSettings(), embedder=embedder)
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def cli_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples and their graph records as ``trilha ingest`` writes them (its encoder chosen
    for the corpus), once for the module: the CLI tests read it or a copy."""
    ws = tmp_path_factory.mktemp("legal-cli") / "ws"
    assert main(["ingest", "-q", "-w", str(ws), str(SAMPLES), "--records", str(RECORDS)]) == 0
    return ws


def _top_doc(ws: Workspace, query: str, **kwargs: object) -> str:
    return ws.search(query, top_k=3, principal=READER, **kwargs).hits[0].unit.doc_id  # type: ignore[arg-type]


def _rank(ws: Workspace, query: str, doc_id: str, kg: bool) -> int:
    docs = [h.unit.doc_id for h in ws.search(query, top_k=10, kg=kg, principal=READER).hits]
    return docs.index(doc_id) + 1


def test_kg_boost_lifts_the_decision_with_criteria(legal_ws: Workspace) -> None:
    # a debt-collection question: the right document is the decision on the 5-year limitation,
    # which the graph links to two Criterios (peso alto and 2), a Fato and a Prova
    query = "quanto tempo tenho para cobrar"
    plain = legal_ws.search(query, top_k=3, kg=False, principal=READER)
    assert plain.hits[0].unit.doc_id == "policy/protecao-dados-lgpd"  # lexical noise wins
    boosted = legal_ws.search(query, top_k=10, kg=True, principal=READER)
    assert _rank(legal_ws, query, DEBT, kg=True) < _rank(legal_ws, query, DEBT, kg=False)
    assert boosted.hits[0].unit.doc_id != "policy/protecao-dados-lgpd"
    debt = next(h for h in boosted.hits if h.unit.doc_id == DEBT)
    assert debt.scores.kg == 1.0
    assert boosted.trace.stage("kg") is not None and not boosted.trace.warnings


def test_graph_down_mid_run_answers_unboosted_with_a_warning(own_legal_ws: Workspace) -> None:
    assert own_legal_ws.graph is not None
    own_legal_ws.graph.store.close()  # the embedded server stops
    result = own_legal_ws.search("prazo prescricional", top_k=3, kg=True, principal=READER)
    assert len(result.hits) == 3
    assert all(h.scores.kg is None for h in result.hits)
    assert any("kg boost skipped" in w for w in result.trace.warnings)


def test_unreachable_graph_server_degrades(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each refused call fails at once, without the driver's 5 s of retries (20 s of sleeps)
    monkeypatch.setattr(
        bolt, "BoltGraphStore", functools.partial(bolt.BoltGraphStore, max_retry_s=0)
    )
    settings = TrilhaSettings(
        graph_backend="bolt", graph_url="bolt://127.0.0.1:9", graph_timeout_s=0.5
    )
    with Workspace.open(tmp_path / "w", settings, embedder=embedder, create=True) as ws:
        report = ws.ingest(make_docs()[:2])
        assert report.docs_added == 2 and any("graph ingest failed" in e for e in report.errors)
        result = ws.search("remote work VPN", top_k=2)
        assert len(result.hits) == 2 and all(h.scores.kg is None for h in result.hits)
        assert any("kg boost skipped" in w for w in result.trace.warnings)


def test_graph_off_means_no_kg_and_no_warning(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with Workspace.open(
        tmp_path / "w", TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    ) as ws:
        ws.ingest(make_docs()[:2])
        result = ws.search("remote work VPN", top_k=2)
        assert result.trace.stage("kg") is None and not result.trace.warnings
        with pytest.raises(ConfigurationError, match="no graph"):
            ws.ingest_records(RECORDS)


def test_a_graph_without_evidence_changes_no_score_under_either_merge(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(load_path(SAMPLES))  # entities in the graph, no Criterio, Fato or Prova
        for merge in ("weighted", "rrf"):
            boosted = ws.search("LGPD incident notification", top_k=10, merge=merge, kg=True)
            plain = ws.search("LGPD incident notification", top_k=10, merge=merge, kg=False)
            assert [(h.unit.unit_id, h.scores.fused) for h in boosted.hits] == [
                (h.unit.unit_id, h.scores.fused) for h in plain.hits
            ], merge


def test_delete_removes_the_document_from_the_graph(own_legal_ws: Workspace) -> None:
    assert own_legal_ws.graph is not None
    count = "MATCH (c:Chunk {doc_id: $d}) RETURN count(c) AS n"
    assert own_legal_ws.graph.store.run(count, {"d": "hr/employee-onboarding"})[0]["n"] > 0
    own_legal_ws.delete("hr/employee-onboarding")
    assert own_legal_ws.graph.store.run(count, {"d": "hr/employee-onboarding"})[0]["n"] == 0


def test_kg_postprocessor_reorders_and_keeps_kg_scores(legal_ws: Workspace) -> None:
    from llama_index.core.schema import QueryBundle

    query = "quanto tempo tenho para cobrar"
    nodes = TrilhaRetriever(legal_ws, top_k=10, kg=False, principal=READER).retrieve(query)
    fused = {n.node.node_id: n.node.metadata["trilha_fused"] for n in nodes}
    boosted = KnowledgeGraphBoost.from_workspace(legal_ws).postprocess_nodes(
        nodes, QueryBundle(query)
    )
    kg = {n.node.node_id: n.node.metadata["trilha_kg"] for n in boosted}
    assert max(kg.values()) == 1.0 and set(kg) == set(fused)
    expected = sorted(fused, key=lambda u: -(0.9 * fused[u] + 0.1 * kg[u]))
    assert [n.node.node_id for n in boosted] == expected
    assert [n.node.metadata["trilha_fused_rank"] for n in boosted] == list(range(1, 11))


def test_graph_tools_return_seed_json(legal_ws: Workspace) -> None:
    tools = {t.metadata.name: t for t in graph_tools(legal_ws, principal=READER)}
    assert set(tools) == {
        "trilha_graph_subgraph",
        "trilha_graph_path",
        "trilha_graph_topn",
        "trilha_graph_mermaid",
        "trilha_graph_context",
    }
    top = tools["trilha_graph_topn"].call(entity_names=["LGPD"], language="pt", limit=2)
    assert top.raw_output["items"][0]["doc_id"] == "policy/protecao-dados-lgpd"
    sub = asyncio.run(tools["trilha_graph_subgraph"].acall(doc_id=DEBT, max_hops=1, limit=50))
    assert {"nodes", "edges", "constraints", "query"} <= set(sub.raw_output)
    labels = {n["label"] for n in sub.raw_output["nodes"]}
    assert {"Doc", "Chunk", "Criterio", "Fato", "Prova"} <= labels
    assert tools["trilha_graph_mermaid"].call(doc_id=DEBT).content.startswith("graph LR")
    assert (
        tools["trilha_graph_path"]
        .call(source_entity="LGPD", target_entity="ANPD")
        .raw_output["meta"]["found"]
    )
    anonymous = {t.metadata.name: t for t in graph_tools(legal_ws)}  # the LGPD policy is Acme's
    assert anonymous["trilha_graph_topn"].call(entity_names=["LGPD"]).raw_output["items"] == []
    hidden = anonymous["trilha_graph_path"].call(source_entity="LGPD", target_entity="ANPD")
    assert hidden.raw_output["meta"]["reason"] == "unknown entity: LGPD, ANPD"


def test_graph_cli(cli_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(cli_folder)  # the commands below only read it
    capsys.readouterr()
    reader = tmp_path / "reader.json"
    reader.write_text(READER.model_dump_json())
    topn = ["graph", "topn", "-w", ws, "--entity", "LGPD", "--language", "pt", "--json"]
    assert main([*topn, "--as-principal", str(reader)]) == 0
    assert json.loads(capsys.readouterr().out)["items"][0]["doc_id"] == "policy/protecao-dados-lgpd"
    assert main(topn) == 0  # anonymous: the Acme policy is not theirs to see
    assert json.loads(capsys.readouterr().out)["items"] == []
    assert main(["graph", "subgraph", "-w", ws, "policy/protecao-dados-lgpd"]) == 2
    hidden = capsys.readouterr().err
    assert main(["graph", "subgraph", "-w", ws, "policy/nao-existe"]) == 2
    assert capsys.readouterr().err == hidden.replace("protecao-dados-lgpd", "nao-existe")
    assert main(["graph", "mermaid", "-w", ws, DEBT, "--max-hops", "1", "--user", "x"]) == 2
    assert "has no principals.yaml" in capsys.readouterr().err
    assert main(["graph", "mermaid", "-w", ws, DEBT, "--max-hops", "1"]) == 0
    assert capsys.readouterr().out.startswith("graph LR")
    assert main(["graph", "path", "-w", ws, "LGPD", "Nowhere Entity", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == []
    assert main(["graph", "subgraph", "-w", ws, DEBT, "--max-hops", "-1"]) == 2
    assert "max_hops" in capsys.readouterr().err
    assert main(["graph", "png", "-w", ws, DEBT, "--out", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["graph", "context", "-w", ws, "--entity", "LGPD", "--lang", "pt"]) == 0
    assert "# Contexto da pergunta" in capsys.readouterr().out


def test_a_configured_extractor_feeds_the_graph(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    from trilha.graph.build.extract import ExtractedEntity
    from trilha.types import TextUnit

    class Glossary:
        """Finds the words of a fixed glossary (as an LLM extractor would, deterministically)."""

        def extract(self, unit: TextUnit) -> list[ExtractedEntity]:
            return (
                [ExtractedEntity("Rede Privada", "Concept", 0.9, 1)] if "VPN" in unit.text else []
            )

    with Workspace.open(
        tmp_path / "w", TrilhaSettings(), embedder=embedder, extractor=Glossary(), create=True
    ) as ws:
        ws.ingest(make_docs())
        assert ws.graph is not None
        rows = ws.graph.store.run(
            "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity {id: $e}) RETURN c.id AS id ORDER BY id",
            {"e": "rede privada"},
        )
        assert [r["id"] for r in rows] == ["onboarding#0", "pol-remote#0"]


LICENCE = "legal/stj-software-licence-breach"


def test_curated_evidence_does_not_lift_unrelated_documents(legal_ws: Workspace) -> None:
    # the licence ruling carries a Criterio (peso alto) and a Prova: a prior of 3.5 on each chunk
    assert legal_ws.graph is not None
    rows = legal_ws.graph.store.run(
        "MATCH (c:Chunk {doc_id: $d}) RETURN DISTINCT c.kg_prior AS p", {"d": LICENCE}
    )
    assert rows == [{"p": 3.5}]
    for k in (5, 10):
        hits = legal_ws.search("remote work requirements", top_k=k, kg=True, principal=READER).hits
        assert LICENCE not in [h.unit.doc_id for h in hits[:5]]
        assert all(h.scores.kg == 0.0 for h in hits if h.unit.doc_id == LICENCE)


def test_ingest_records_refuses_phantoms_and_writes_nothing(
    own_legal_ws: Workspace, tmp_path: Path
) -> None:
    assert own_legal_ws.graph is not None
    docs, chunks = own_legal_ws.graph.doc_ids(), own_legal_ws.graph.chunk_ids()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"kind":"node","label":"Criterio","id":"Novo critério"}\n'
        f'{{"kind":"edge","type":"HAS_CRITERIO","source":"Doc:{DEBT}",'
        '"target":"Criterio:Novo critério"}\n'
        '{"kind":"edge","type":"HAS_FATO","source":"Doc:juridico/nao-existe","target":"Fato:f"}\n'
        f'{{"kind":"edge","type":"HAS_PROVA","source":"Chunk:{DEBT}#99","target":"Prova:p"}}\n'
    )
    with pytest.raises(BadRequestError, match="line 3: source Doc:juridico/nao-existe") as err:
        own_legal_ws.ingest_records(bad)
    assert f"line 4: source Chunk:{DEBT}#99 is not a unit" in str(err.value)
    assert (own_legal_ws.graph.doc_ids(), own_legal_ws.graph.chunk_ids()) == (docs, chunks)
    assert not own_legal_ws.graph.store.run("MATCH (c:Criterio {id: 'novo critério'}) RETURN c.id")


def _evidence_edges(ws: Workspace, doc_id: str) -> int:
    assert ws.graph is not None
    rows = ws.graph.store.run(
        "MATCH (d:Doc {id: $d})-[r]->(x) WHERE type(r) IN ['HAS_CRITERIO', 'HAS_FATO', "
        "'HAS_PROVA'] RETURN count(r) AS n",
        {"d": doc_id},
    )
    return int(rows[0]["n"])


def test_editing_a_document_keeps_its_curated_graph_evidence(
    own_legal_ws: Workspace, tmp_path: Path
) -> None:
    (debt,) = [d for d in own_legal_ws.load(SAMPLES) if getattr(d, "doc_id", None) == DEBT]
    assert isinstance(debt, SourceDocument)
    before = _evidence_edges(own_legal_ws, DEBT)
    assert before == 4
    edited = debt.model_copy(update={"text": debt.text + "\n\nNota do editor: revisado."})
    report = own_legal_ws.ingest([edited])
    assert report.docs_updated == 1 and not report.errors
    assert _evidence_edges(own_legal_ws, DEBT) == before
    hits = own_legal_ws.search(
        "prazo prescricional cobrança dívida", top_k=5, principal=READER
    ).hits
    assert any(h.unit.doc_id == DEBT and (h.scores.kg or 0) > 0 for h in hits)
    assert own_legal_ws.check().consistent


def test_graph_orphans_are_removed_when_the_workspace_opens(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    from trilha.types import TextUnit

    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(make_docs()[:3])
        assert ws.graph is not None
        ws.graph.ingest([TextUnit(unit_id="ghost#0", doc_id="ghost", text="Orphan ACME unit")])
        assert "ghost#0" in ws.check().graph.orphans  # type: ignore[union-attr]
    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        found = ws.check()
        assert found.consistent and found.graph is not None and found.graph.count == 3
        assert ws.graph is not None and "ghost" not in ws.graph.doc_ids()


def test_graph_topn_demo_three_users_three_answers(
    cli_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same entities asked by the Acme CFO, the Beta user and anonymous (issue 8 demo)."""
    ws = tmp_path / "demo"
    copy_workspace(cli_folder, ws)  # a copy: this test adds principals.yaml
    (ws / "principals.yaml").write_bytes(PRINCIPALS.read_bytes())
    capsys.readouterr()
    seen = {}
    for user in ("maria.cfo", "carla.beta", None):
        who = ["--user", user] if user else []
        topn = ["graph", "topn", "-w", str(ws), "--entity", "SOC", "--entity", "Beta", "--json"]
        assert main([*topn, "--limit", "10", *who]) == 0
        seen[user] = [i["doc_id"] for i in json.loads(capsys.readouterr().out)["items"]]
    assert "finance/budget-memo-q3-2025" in seen["maria.cfo"]  # her confidential memo
    assert "beta/politica-home-office" not in seen["maria.cfo"]
    assert seen["carla.beta"] == ["beta/politica-home-office"]
    assert seen[None] == []


def test_an_old_graph_gets_its_access_fields_when_the_workspace_opens(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    strip = "MATCH (n) WHERE n:Doc OR n:Chunk REMOVE n.acl, n.sensitivity, n.org_id"
    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(make_docs()[:3])
        assert ws.graph is not None
        ws.graph.store.write(strip)  # as a graph written before issue 8 holds them
        assert ws.graph.topn(principal=READER).items == []  # missing fields fail closed
    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        assert ws.graph is not None
        rows = ws.graph.store.run("MATCH (c:Chunk) RETURN c.acl AS acl, c.sensitivity AS s")
        assert len(rows) >= 3 and all(r["acl"] is not None and r["s"] is not None for r in rows)
        assert len(ws.graph.topn(principal=READER).items) == 3
