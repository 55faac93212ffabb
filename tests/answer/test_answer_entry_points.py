"""`trilha ask`, `trilha eval --answers` and the LlamaIndex query engine."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest

from trilha.access import Principal
from trilha.access.directory import load_principals
from trilha.answer import ask
from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.llamaindex import TrilhaQueryEngine
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

SAMPLE_PRINCIPALS = Path(str(files("trilha.samples") / "principals.yaml"))
DOCS = {
    "runbook.md": "---\nlang: en\n---\n# Incidents\n\nEvery suspected security incident must be "
    "reported to the SOC within one hour. Contact soc@example.com or (11) 98765-4321.\n",
    "ferias.md": "---\nlang: pt\n---\n# Férias\n\nAs férias devem ser pedidas com trinta dias "
    "de antecedência ao gestor. O pedido é feito no portal de RH.\n",
}


@pytest.fixture(scope="module")
def cli_ws(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A workspace of :data:`DOCS` ingested by the CLI (read-only)."""
    tmp_path = tmp_path_factory.mktemp("cli")
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(docs)]) == 0
    return ws


def test_ask_prints_a_cited_answer(cli_ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["ask", "-w", cli_ws, "How soon must a security incident be reported?"]) == 0
    out = capsys.readouterr().out
    assert "within one hour" in out and "[1] runbook" in out and "trilha/extractive" in out
    assert "soc@example.com" not in out and "[EMAIL]" in out and "98765" not in out


def test_ask_json_is_seed_002s_response(cli_ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["ask", "-w", cli_ws, "--json", "-k", "5", "Quando pedir férias?"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert {"answer", "citations", "trace_id", "metrics", "trace", "no_answer"} <= set(body)
    assert body["citations"][0]["doc_id"] == "ferias" and body["lang"] == "pt"
    assert set(body["metrics"]) == {"latency_ms", "cost", "retrieval"}
    assert set(body["metrics"]["retrieval"]) == {"bm25_hits", "ann_hits", "rerank_kept"}


def test_ask_without_an_answer_says_which_edge(
    cli_ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["ask", "-w", cli_ws, "férias", "--tags", "nada"]) == 0
    out = capsys.readouterr().out
    assert "No answer:" in out and "HybridRetrieve → RerankResults" in out


def test_ask_errors_are_one_line(
    tmp_path: Path, cli_ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["ask", "-w", cli_ws, "x", "-k", "0"]) == 2
    assert "params.k" in capsys.readouterr().err
    assert main(["ask", "-w", cli_ws, "x", "--backend", "llm"]) == 2
    assert "TRILHA_GROQ_API_KEY" in capsys.readouterr().err
    assert main(["eval", "--out", str(tmp_path / "o.json")]) == 2
    assert "--data DIR" in capsys.readouterr().err


def test_eval_answers_on_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "answers.json"
    args = ["eval", "--answers", "--out", str(out), "-w", str(tmp_path / "ws"), "-q"]
    assert main([*args, "--max-queries", "8"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["dataset"] == "demo" and report["n_questions"] == 8
    assert report["groundedness"] >= 0.9 and report["citation_precision"] >= 0.9
    assert report["answers_citing_relevant"] >= 0.75
    assert report["judge"].startswith("lexical overlap")
    assert "groundedness" in capsys.readouterr().out


def _mini_beir(tmp_path: Path) -> Path:
    data = tmp_path / "mini"
    (data / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": "d1", "title": "Vitamin D", "text": "Vitamin D deficiency raises fracture risk."},
        {"_id": "d2", "title": "Sleep", "text": "Short sleep lowers attention in adults."},
        {"_id": "d3", "title": "Coffee", "text": "Coffee intake is not linked to arrhythmia."},
    ]
    queries = [{"_id": "q1", "text": "Does vitamin D deficiency raise fracture risk?"},
               {"_id": "q2", "text": "Is coffee linked to arrhythmia?"}]  # fmt: skip
    (data / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus), "utf-8")
    (data / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries), "utf-8")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    return data


def test_eval_answers_on_a_beir_folder(tmp_path: Path) -> None:
    data = _mini_beir(tmp_path)
    out = tmp_path / "a.json"
    assert main(["eval", "--answers", "--data", str(data), "--out", str(out), "-q"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["answered"] == 1.0 and report["answers_citing_relevant"] == 1.0
    assert [q["cited"][0] for q in report["questions"]] == ["d1", "d3"]


def test_a_section_headed_by_the_question_answers_with_its_first_sentence(
    sample_ws: Workspace,
) -> None:
    # the README's quickstart: the deadline opens the section "4.2 Prazo para pedir reembolso"
    # and repeats none of the question's words
    maria = load_principals(SAMPLE_PRINCIPALS)["maria.cfo"]
    answer = ask(sample_ws, "Qual o prazo para pedir reembolso?", principal=maria)
    lines = answer.answer.splitlines()
    assert lines[0].startswith("O relatório de despesas deve ser enviado no sistema em até 30 dias")
    assert answer.citations[0].heading == "4.2 Prazo para pedir reembolso"


def test_a_title_that_holds_the_question_adds_no_opening_sentence(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    # every unit of a document shares its title: only a heading makes a unit's opening an answer
    manual = SourceDocument(
        doc_id="manual",
        source_type="markdown",
        meta={"title": "Manual de reembolso de despesas de viagem", "lang": "pt"},
        text="# Geral\n\nEste capítulo trata de temas gerais da empresa. As despesas de viagem "
        "são reembolsadas mediante nota fiscal.\n\n# Anexos\n\nVeja o anexo para os "
        "formulários usados. O reembolso sai em dez dias úteis.\n",
    )
    settings = TrilhaSettings(graph_backend="none")
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest([manual])
        answer = ask(ws, "Qual o reembolso de despesas de viagem?")
    assert "As despesas de viagem são reembolsadas mediante nota fiscal." in answer.answer
    assert "temas gerais" not in answer.answer and "Veja o anexo" not in answer.answer


def test_query_engine_returns_the_cited_answer(sample_ws: Workspace) -> None:
    acme = Principal(user_id="ana", org_ids=["acme"], hierarchy_level=1, clearance=1)
    engine = TrilhaQueryEngine(sample_ws, principal=acme, k=20)
    response = engine.query("How quickly must a suspected security incident be reported?")
    assert "[1]" in str(response) and response.source_nodes
    first = response.source_nodes[0]
    assert first.node.metadata["doc_id"] == "it/incident-response-runbook"
    assert response.metadata is not None and response.metadata["trace_id"].startswith("a-")
    assert response.metadata["no_answer"] is None
    with pytest.raises(Exception, match=r"params\.k"):
        TrilhaQueryEngine(sample_ws, k=0)


async def test_query_engine_async_and_no_answer(sample_ws: Workspace) -> None:
    engine = TrilhaQueryEngine(sample_ws, filters={"doc_ids": ["none"]})
    response = await engine.aquery("prazo prescricional")
    assert str(response).startswith("No answer:") and not response.source_nodes
    assert response.metadata is not None
    assert response.metadata["no_answer"]["condition"] == "candidates.count > 0"


def test_eval_answers_reranks_with_the_backend_asked(
    tmp_path: Path, tiny_cross_encoder: Path
) -> None:
    out = tmp_path / "a.json"
    argv = ["eval", "--answers", "--rerank", "--data", str(_mini_beir(tmp_path)), "-q"]
    argv += ["--out", str(out), "--reranker", str(tiny_cross_encoder)]
    assert main([*argv, "--rerank-backend", "torch", "--rerank-precision", "fp32"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["rerank"] is True and report["answered"] == 1.0
    assert report["reranker"] == {
        "model": str(tiny_cross_encoder),
        "backend": "torch",
        "precision": "fp32",
        "batch_size": 4,
    }


def test_plain_eval_takes_the_reranker_settings_from_the_environment(
    tmp_path: Path, tiny_cross_encoder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRILHA_RERANK_BACKEND", "torch")
    monkeypatch.setenv("TRILHA_RERANK_PRECISION", "fp32")
    out = tmp_path / "r.json"
    argv = ["eval", "--data", str(_mini_beir(tmp_path)), "--out", str(out), "-q"]
    argv += ["--reranker", str(tiny_cross_encoder), "--systems", "hybrid_weighted_rerank"]
    assert main(argv) == 0
    reranker = json.loads(out.read_text(encoding="utf-8"))["config"]["reranker"]
    assert (reranker["backend"], reranker["precision"]) == ("torch", "fp32")


def test_eval_reports_the_corpus_documents_it_could_not_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = _mini_beir(tmp_path)
    with (data / "corpus.jsonl").open("a", encoding="utf-8") as f:
        f.write("\n" + json.dumps({"_id": "d4", "title": "", "text": "  "}))
    out = tmp_path / "e.json"
    assert main(["eval", "--data", str(data), "--out", str(out), "-q", "--systems", "bm25"]) == 0
    ingest = json.loads(out.read_text(encoding="utf-8"))["ingest"]
    assert ingest["refused"] == 1 and ingest["docs_added"] == 3
    assert "no text to index" in ingest["refusals"][0]
    assert "1 corpus document(s) refused, so never retrieved" in caplog.text
