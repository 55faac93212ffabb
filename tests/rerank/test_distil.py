"""trilha distil: a smaller cross-encoder learns the teacher's scores on ask's own pairs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SAMPLES
from trilha.answer import ask
from trilha.answer.distil import DistilRequest, run_distil
from trilha.answer.rerank_pairs import rerank_pairs
from trilha.cli.distil import read_questions
from trilha.encode.onnx_export import export_key
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError
from trilha.ingest.loaders import load_path
from trilha.rerank import distil
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

QUESTIONS = [
    "security incident report deadline",
    "how many hours to report a security incident to the soc",
    "vpn on a laptop when working remotely",
    "prazo para trabalho remoto",
    "dados pessoais e a anpd",
    "policy for personal data",
]


def test_kept_layers_spread_evenly_and_keep_the_last() -> None:
    assert distil.kept_layers(6, 4) == [0, 2, 3, 5]
    assert distil.kept_layers(6, 3) == [0, 2, 5] or distil.kept_layers(6, 3) == [0, 3, 5]
    assert distil.kept_layers(6, 1) == [5]
    assert distil.kept_layers(12, 6)[-1] == 11 and len(distil.kept_layers(12, 6)) == 6
    for bad in (0, 6, 7):
        with pytest.raises(BadRequestError, match="--layers must be between 1 and 5"):
            distil.kept_layers(6, bad)


def test_rerank_pairs_are_the_windows_ask_reads(sample_ws: Workspace) -> None:
    pairs = list(rerank_pairs(sample_ws, [QUESTIONS[0], "   "], k=8))
    text, windows = pairs[0]
    assert text == QUESTIONS[0] and 0 < len(windows) <= 8
    assert all(isinstance(w, str) and w.strip() for w in windows)
    assert pairs[1][1] == []  # an empty question gives no pairs, not an error


@pytest.fixture(scope="module")
def spread_teacher(tiny_cross_encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random three-layer cross-encoder over the tiny one's vocabulary, initialised wide so
    that its scores spread (a default random model scores every pair nearly alike) and a
    one-layer student has a ranking to learn."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_cross_encoder))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        max_position_embeddings=128,
        initializer_range=0.3,
    )
    folder = tmp_path_factory.mktemp("spread-teacher")
    BertForSequenceClassification(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def test_distil_trains_a_student_that_agrees_more_than_the_copy(
    sample_ws: Workspace, spread_teacher: Path, tmp_path: Path
) -> None:
    out = tmp_path / "student"
    request = DistilRequest(
        teacher=str(spread_teacher), out=out, layers=1, epochs=20, learning_rate=1e-3, held_out=0.0
    )
    lines: list[str] = []
    report = run_distil(sample_ws, QUESTIONS, request, progress=lines.append)
    assert report["layers"] == 1 and report["kept"] == [2] and report["teacher_layers"] == 3
    assert report["questions"] == len(QUESTIONS) and report["pairs"] > len(QUESTIONS)
    assert any(line.startswith("step ") for line in lines)
    assert json.loads((out / "config.json").read_text())["num_hidden_layers"] == 1
    # measured on the questions it learnt from (held_out 0): the fit must have moved
    # toward the teacher
    student, tokenizer = distil.load(str(out))
    teacher, _ = distil.load(str(spread_teacher))
    groups = [distil.Group(t, w) for t, w in rerank_pairs(sample_ws, QUESTIONS, k=40) if w]
    distil.teach(teacher, tokenizer, groups, 80)
    copied = distil.agreement(distil.student_of(teacher, 1), tokenizer, groups, 80, 3)
    trained = distil.agreement(student, tokenizer, groups, 80, 3)
    assert trained.mse < copied.mse / 2 and trained.spearman > copied.spearman
    assert report["agreement_on"] == "training questions"
    assert report["agreement"]["trained"]["mse"] < report["agreement"]["copied"]["mse"]
    # the student is an ordinary cross-encoder folder for the rerank stage
    reranker = CrossEncoderReranker(str(out), backend="torch", precision="fp32")
    scores = reranker.score(QUESTIONS[0], ["security incident report", "vpn laptop"])
    assert np.all(np.isfinite(scores)) and len(scores) == 2


def test_export_key_changes_when_the_folder_is_written_again(tiny_cross_encoder: Path) -> None:
    import os

    before = export_key(str(tiny_cross_encoder))
    assert before == export_key(str(tiny_cross_encoder))
    weights = next(tiny_cross_encoder.glob("*.safetensors"))
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    try:
        assert export_key(str(tiny_cross_encoder)) != before
    finally:
        os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_read_questions_from_text_jsonl_and_beir(tmp_path: Path) -> None:
    text = tmp_path / "q.txt"
    text.write_text("first question\n\n  second question  \n", encoding="utf-8")
    assert read_questions(text, "train") == ["first question", "second question"]
    rows = tmp_path / "q.jsonl"
    rows.write_text('{"_id": "1", "text": "one"}\n{"_id": "2", "text": "two"}\n')
    assert read_questions(rows, "train") == ["one", "two"]
    rows.write_text('{"_id": "1", "text": "one"}\n{"_id": "2"}\n')
    with pytest.raises(BadRequestError, match=r"q.jsonl:2: no 'text' field"):
        read_questions(rows, "train")
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "d", "text": "x"}\n')
    (beir / "queries.jsonl").write_text(
        '{"_id": "1", "text": "one"}\n{"_id": "2", "text": "two"}\n'
    )
    (beir / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n2\td\t1\n")
    assert read_questions(beir, "train") == ["two"]


def test_distil_command_writes_a_student_and_refuses_bad_input_in_one_line(
    tmp_path: Path, tiny_cross_encoder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trilha.cli.main import main

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in (
        ("a.md", "The SOC handles every security incident. Report it within one hour."),
        ("b.md", "Remote work needs a VPN on the laptop, and a security policy."),
        ("c.md", "An incident report names the laptop and the hour it was lost."),
    ):
        (docs / name).write_text(text, encoding="utf-8")
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(docs)]) == 0
    questions = tmp_path / "q.txt"
    questions.write_text("security incident report\nvpn laptop remote work\n", encoding="utf-8")
    out = tmp_path / "student"
    base = ["distil", "-q", "-w", ws, "--teacher", str(tiny_cross_encoder), "--out", str(out)]
    capsys.readouterr()
    assert main([*base, "--questions", str(questions), "--layers", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == 2 and report["layers"] == 1 and report["held_out"] == 1
    assert (out / "config.json").exists() and (out / "tokenizer.json").exists()
    for extra, message in (
        (["--questions", str(questions), "--layers", "2"], "--layers must be between 1 and 1"),
        (["--questions", str(tmp_path / "none.txt")], "does not exist"),
        (["--questions", str(questions), "--epochs", "0"], "--epochs must be positive"),
        (["--questions", str(questions), "--held-out", "1"], "--held-out must be"),
        (["--questions", str(docs / "a.md"), "--max-questions", "1"], "at least 2"),
    ):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_pairs_never_read_what_an_anonymous_caller_may_not_see(sample_ws: Workspace) -> None:
    questions = [
        "confidential memo Q3 2025 budget planning",
        "budget planning for the executive board",
        "nota pessoal pedido de trabalho remoto do bruno",
    ]
    windows = [w for _, found in rerank_pairs(sample_ws, questions, k=40) for w in found]
    assert windows  # the public documents still answer
    assert not any("Confidential memo" in w or "Nota pessoal" in w for w in windows)


def test_out_is_checked_before_any_long_step(tmp_path: Path, tiny_cross_encoder: Path) -> None:
    teacher = str(tiny_cross_encoder)
    for out, message in (
        (tiny_cross_encoder, "holds the teacher"),
        (tiny_cross_encoder.parent, "holds the teacher"),
        (tiny_cross_encoder / "config.json", "is a file"),
    ):
        with pytest.raises(BadRequestError, match=message):
            distil.check_out(out, teacher)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(BadRequestError, match="is a file"):
        distil.check_out(a_file, teacher)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(BadRequestError, match="other files in it"):
        distil.check_out(busy, teacher)
    assert (busy / "notes.txt").exists()
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "config.json").write_text("{}")
    assert distil.check_out(earlier, teacher) == earlier.resolve()
    assert distil.check_out(tmp_path / "new" / "student", teacher).parent.is_dir()
    assert not (tmp_path / "new" / "student.tmp").exists()


def test_repeated_questions_are_read_once(tmp_path: Path) -> None:
    text = tmp_path / "q.txt"
    text.write_text("Same  question\nsame question\nother\n", encoding="utf-8")
    assert read_questions(text, "train") == ["Same  question", "other"]


def test_pairs_are_exactly_what_ask_sends_its_reranker(
    tmp_path: Path, tiny_cross_encoder: Path, embedder: SentenceTransformerEmbedder
) -> None:
    settings = TrilhaSettings(
        reranker_model=str(tiny_cross_encoder), rerank_backend="torch", rerank_precision="fp32"
    )
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(load_path(SAMPLES))
        sent: list[tuple[str, list[str]]] = []
        reranker = ws.reranker
        score = reranker.score

        def spy(query: str, texts: list[str], max_length: int | None = None) -> object:
            sent.append((query, list(texts)))  # records, then scores for real
            return score(query, texts, max_length=max_length)

        reranker.score = spy  # type: ignore[method-assign]
        question = "How many hours to report a security incident?"
        assert ask(ws, question, rerank=True).answered
        assert len(sent) == 1 and len(sent[0][1]) > 1
        assert sent == list(rerank_pairs(ws, [question], k=40))
