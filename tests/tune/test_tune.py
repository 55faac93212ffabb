"""``trilha tune`` on a small BEIR folder: the replayed fusion equals the searcher's, the fit is
written to the workspace and used from then on, ``trilha info`` shows where each value came from."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError
from trilha.eval.beir import load_beir
from trilha.eval.metrics import evaluate, ndcg_per_query
from trilha.eval.runner import rank_scores
from trilha.eval.systems import SPECS, workspace_system
from trilha.retrieve.fusion import Weights, peakedness, shaped
from trilha.retrieve.fusion_table import TUNED_FILE, Fusion, FusionTable, read_table
from trilha.retrieve.plan import fusion_for
from trilha.settings import TrilhaSettings
from trilha.tune.candidates import collect
from trilha.tune.fit import folds_of
from trilha.tune.replay import mean_ndcg
from trilha.tune.run import run_tune
from trilha.workspace import Workspace

DOCS = {
    "d01": "Basaltic lava flows from shield volcanoes cool into columnar joints.",
    "d02": "Worker honeybees perform a waggle dance to share the direction of nectar.",
    "d03": "Ocean tides are driven by the gravitational pull of the moon and the sun.",
    "d04": "The pancreas releases insulin to lower blood glucose after a meal.",
    "d05": "Glaciers carve U-shaped valleys as the ice slowly grinds the bedrock.",
    "d06": "Chloroplasts capture sunlight to turn carbon dioxide into sugar.",
    "d07": "Vaccines train the immune system with harmless antigens of a pathogen.",
    "d08": "A compiler translates source code into machine instructions.",
    "d09": "Coral bleaching follows the loss of symbiotic algae in warm water.",
    "d10": "Jet streams are fast winds high in the atmosphere near the tropopause.",
    "d11": "Penicillin kills bacteria by blocking the synthesis of the cell wall.",
    "d12": "Deep sleep consolidates memory through slow oscillations in the cortex.",
}
QUERIES = {
    "1": ("how do bees tell each other where flowers are", "d02"),
    "2": ("why does the sea rise and fall", "d03"),
    "3": ("antibiotic that breaks bacterial walls", "d11"),
    "4": ("hormone that lowers sugar in the blood", "d04"),
    "5": ("rivers of ice shaping mountains", "d05"),
    "6": ("how plants make food from light", "d06"),
    "7": ("immunisation with weakened germs", "d07"),
    "8": ("software that turns programs into machine code", "d08"),
    "9": ("reefs turning white in hot seas", "d09"),
    "10": ("strong winds in the upper atmosphere", "d10"),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data") / "tiny"
    (root / "qrels").mkdir(parents=True)
    rows = [{"_id": d, "title": "", "text": t} for d, t in DOCS.items()]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    qrows = [{"_id": q, "text": t} for q, (t, _) in QUERIES.items()]
    (root / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qrows))
    for split in ("train", "test"):
        qrels = "".join(f"{q}\t{d}\t1\n" for q, (_, d) in QUERIES.items())
        (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return root


@pytest.fixture()
def settings() -> TrilhaSettings:
    return TrilhaSettings(graph_backend="none")


@pytest.mark.parametrize(
    ("name", "signal", "penalty"),
    [
        ("hybrid_weighted", "none", 0.0),
        ("hybrid_weighted", "peak", 0.0),
        ("hybrid_rrf", "none", 0.0),
        ("hybrid_rrf", "none", 0.5),
    ],
)
def test_replayed_fusion_equals_the_searchers(
    folder: Path,
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    name: str,
    signal: str,
    penalty: float,
) -> None:
    ds = load_beir(folder, "test")
    settings = TrilhaSettings(
        graph_backend="none", fusion_by_lang={"en": {"signal": signal}}, doc_penalty=penalty
    )
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(ds.documents(), lang="en")
        system = workspace_system(ws, SPECS[name], 100)
        run = {q.query_id: rank_scores(system(q.text)) for q in ds.queries}
        searched = evaluate(ds.qrels, run)["ndcg@10"]
        fusion = Fusion(merge=SPECS[name].merge, signal=signal)  # type: ignore[arg-type]
        replayed = mean_ndcg(collect(ws, ds.queries, ds.qrels), fusion, 100, penalty)
    assert replayed == pytest.approx(searched, abs=1e-9)


def test_a_tuned_k1_and_b_are_what_searches_score_with(
    folder: Path, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    """BM25's k1 and b written to the workspace's fusion.yaml (as trilha tune writes them)
    change the scores a search returns, exactly as the replay scores them; a TRILHA_BM25_*
    setting wins over them."""
    ds = load_beir(folder, "test")
    settings = TrilhaSettings(graph_backend="none")
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir, settings, embedder=embedder, create=True) as ws:
        ws.ingest(ds.documents(), lang="en")
        seed = {q.query_id: ws.search(q.text, sides=("bm25",)).hits for q in ds.queries}
    (ws_dir / TUNED_FILE).write_text("en: {bm25_k1: 0.6, bm25_b: 0.3}\n")
    with Workspace.open(ws_dir, settings, embedder=embedder) as ws:
        lexical = ws.searcher.lexical
        changed = 0
        for q in ds.queries:
            hits = ws.search(q.text, sides=("bm25",)).hits
            expected = lexical.score_all(q.text, k1=0.6, b=0.3)
            assert bool(hits) == (expected is not None and bool(expected.any()))
            for hit in hits:
                row = lexical.row_of.get(hit.unit.unit_id)
                assert expected is not None and row is not None
                assert hit.scores.bm25 == pytest.approx(expected[row], rel=1e-9)
            changed += [h.scores.bm25 for h in hits] != [h.scores.bm25 for h in seed[q.query_id]]
        assert changed >= len(ds.queries) // 2
        system = workspace_system(ws, SPECS["hybrid_weighted"], 100)
        run = {q.query_id: rank_scores(system(q.text)) for q in ds.queries}
        fusion = Fusion(bm25_k1=0.6, bm25_b=0.3)
        found = collect(ws, ds.queries, ds.qrels, k1=0.6, b=0.3)
        assert mean_ndcg(found, fusion, 100) == pytest.approx(
            evaluate(ds.qrels, run)["ndcg@10"], abs=1e-9
        )
    explicit = TrilhaSettings(graph_backend="none", bm25_k1=1.5, bm25_b=0.75)
    with Workspace.open(ws_dir, explicit, embedder=embedder) as ws:
        fusion, origin = ws.fusion.resolve("en")
        assert (fusion.bm25_k1, origin["bm25_k1"]) == (1.5, "settings")
        for q in ds.queries:
            again = ws.search(q.text, sides=("bm25",)).hits
            assert [h.scores.bm25 for h in again] == [h.scores.bm25 for h in seed[q.query_id]]


def test_tune_writes_the_workspace_fusion_and_searches_use_it(
    folder: Path, tmp_path: Path, settings: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir, settings, embedder=embedder, create=True):
        pass  # the same encoder as the tests' (the workspace remembers its model)
    dry = run_tune(
        folder, ws_dir, lang="en", folds=2, write=False, progress=False, settings=settings
    )
    assert dry["written"] is None and not (ws_dir / TUNED_FILE).exists()
    report = run_tune(folder, ws_dir, lang="en", folds=2, progress=False, settings=settings)
    assert report["lang"] == "en" and report["queries"] == len(QUERIES)
    merge = report["stages"]["merge"]
    assert len(merge["heldout_ndcg@10"]) == 2
    assert merge["train_ndcg@10"]["tuned"] >= merge["train_ndcg@10"]["untuned"]
    written = (ws_dir / TUNED_FILE).read_text()
    assert written.startswith("# Written by trilha tune")
    with Workspace.open(ws_dir, settings, embedder=embedder, create=True) as ws:
        fusion, origin = ws.fusion.resolve("en")
        assert fusion == Fusion(**report["tuned"])
        tuned_fields = [k for k, v in origin.items() if v.startswith("tuned")]
        kept = [report["stages"][name]["kept"] for name in ("lexical", "merge", "depth")]
        assert bool(tuned_fields) == any(kept)
        assert ("bm25_k1" in tuned_fields) == report["stages"]["lexical"]["kept"]
        assert ws.plan("bees and flowers").lang == "en"


def test_tune_leaves_k1_and_b_given_as_settings_alone(
    folder: Path, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    """TRILHA_BM25_K1 / _B win over the workspace's file, so tune fits nothing there (what it
    wrote would never apply, and the stages after it would be fitted on other scores)."""
    pinned = TrilhaSettings(graph_backend="none", bm25_k1=1.2, bm25_b=0.5)
    ws_dir = tmp_path / "ws"
    with Workspace.open(ws_dir, pinned, embedder=embedder, create=True):
        pass
    report = run_tune(folder, ws_dir, lang="en", folds=2, progress=False, settings=pinned)
    lexical = report["stages"]["lexical"]
    assert not lexical["kept"] and lexical["heldout_gain"] == 0
    assert (report["tuned"]["bm25_k1"], report["tuned"]["bm25_b"]) == (1.2, 0.5)
    written = ws_dir / TUNED_FILE
    if written.exists():
        entry = read_table(written)["en"]
        assert entry.bm25_k1 is None and entry.bm25_b is None


def test_layers_settings_and_requests(tmp_path: Path) -> None:
    (tmp_path / TUNED_FILE).write_text("pt: {weight_bm25: 0.9, merge: rrf}\n")
    settings = TrilhaSettings(weight_semantic=0.2, fusion_by_lang={"pt": {"rrf_k": 20}})
    table = FusionTable.of(settings, tmp_path)
    pt, origin = table.resolve("pt")
    assert (pt.merge, pt.weight_bm25, pt.weight_semantic, pt.rrf_k) == ("rrf", 0.9, 0.2, 20)
    assert origin["weight_bm25"].startswith("tuned") and origin["weight_semantic"] == "settings"
    assert origin["rrf_k"] == "settings (by language) [pt]"
    en, origin = table.resolve("en")
    assert (en.merge, en.weight_bm25) == ("weighted", 0.5)
    assert origin["weight_bm25"] == "seed 001 default"
    assert table.languages() == ["pt"]
    assert fusion_for(table, "Qual o prazo de prescrição?", lambda: ["en", "pt"])[0] == "pt"
    plain = FusionTable.of(TrilhaSettings(), tmp_path / "nowhere")
    langs = lambda: ["en", "pt"]  # noqa: E731
    assert fusion_for(plain, "Qual o prazo de prescrição?", langs) == (None, Fusion())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pt: {weight_bm25: -1}\n", "entry 'pt'"),
        ("pt: {alpha: 1}\n", "entry 'pt'"),
        ("- 1\n", "maps 'default' or a language"),
        ("pt: [\n", "cannot read the fusion table"),
    ],
)
def test_a_bad_fusion_table_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / TUNED_FILE).write_text(text)
    with pytest.raises(BadRequestError, match=message) as info:
        FusionTable.of(TrilhaSettings(), tmp_path)
    assert "\n" not in str(info.value)


def test_peakedness_shifts_the_shares_toward_the_surer_side() -> None:
    flat = [1.0 - i / 100 for i in range(30)]  # falls off evenly: top ten span 9/29 of it
    plateau = [1.0] * 10 + [0.1] * 20  # ten alike: no clear winner
    assert peakedness(flat) == pytest.approx(9 / 29)
    assert peakedness(plateau) == 0.0 and peakedness(flat[:10]) == 1.0
    w = shaped(Weights(bm25=0.5, semantic=0.4, kg=0.1), flat, [1.0 - i / 10 for i in range(30)])
    assert w.bm25 + w.semantic == pytest.approx(0.9) and w.kg == 0.1
    assert w.bm25 < 0.5  # the dense list falls faster within its top ten


def test_folds_cover_every_query_once() -> None:
    folds = folds_of(11, 3)
    assert sorted(i for f in folds for i in f) == list(range(11))


def test_cli_tune_and_info(
    folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRILHA_GRAPH_BACKEND", "none")
    ws = str(tmp_path / "ws")
    out = tmp_path / "tune.json"
    code = main(["tune", "--data", str(folder), "-w", ws, "--folds", "2", "-q", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "held-out folds" in printed and "wrote " in printed
    assert json.loads(out.read_text())["split"] == "train"
    assert main(["info", "-w", ws, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["units"] == len(DOCS) and info["languages"] == {"en": len(DOCS)}
    assert set(info["fusion"]["en"]) == set(Fusion.model_fields)
    assert main(["tune", "--data", str(folder), "-w", ws, "--folds", "1"]) == 2
    assert "at least 2" in capsys.readouterr().err


def test_the_replayed_ndcg_is_trec_evals() -> None:
    qrels = {"q1": {"a": 1, "c": 2}, "q2": {"z": 1}, "q3": {}}
    ranked = {"q1": ["b", "c", "a"], "q2": []}
    run = {q: {d: float(10 - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
    per_q = ndcg_per_query(qrels, ranked)
    assert per_q["q2"] == per_q["q3"] == 0.0
    ideal = 2 + 1 / math.log2(3)
    assert per_q["q1"] == pytest.approx((2 / math.log2(3) + 1 / 2) / ideal)
    assert sum(per_q.values()) / 3 == pytest.approx(evaluate(qrels, run)["ndcg@10"])
