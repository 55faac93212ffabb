"""Cross-encoder rerank reproduces the model's own ordering and keeps earlier scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import READER, SHARED
from trilha.errors import ConfigurationError, ModelLoadError
from trilha.ingest.chunking import index_text
from trilha.rerank.base import apply_scores
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.types import Hit, StageScores, TextUnit
from trilha.workspace import Workspace

CE_SCIFACT = SHARED / "models" / "ce-minilm-scifact"


def _hits(n: int) -> list[Hit]:
    return [
        Hit(
            unit=TextUnit(unit_id=f"d{i}#0", doc_id=f"d{i}", text=f"text {i}"),
            scores=StageScores(fused=1.0 - i / n, fused_rank=i + 1, bm25=float(n - i)),
        )
        for i in range(n)
    ]


def test_apply_scores_orders_by_model_and_keeps_scores() -> None:
    hits = _hits(4)
    out = apply_scores(hits, [0.1, 0.9, 0.5, 0.9], top_n=3)
    assert [h.unit.unit_id for h in out] == ["d1#0", "d3#0", "d2#0"]  # tie: input order
    assert [h.scores.rerank_rank for h in out] == [1, 2, 3]
    assert out[0].scores.bm25 == 3.0 and out[0].scores.fused_rank == 2
    assert hits[1].scores.rerank is None  # inputs untouched


def test_apply_scores_blend_mixes_normalised_scores() -> None:
    out = apply_scores(_hits(2), [0.0, 1.0], top_n=2, blend=0.75)
    # d0: .25*0 + .75*1 = .75 ; d1: .25*1 + .75*0 = .25
    assert [h.unit.unit_id for h in out] == ["d0#0", "d1#0"]
    assert out[0].scores.rerank == 0.0


def _check_exact_order(reranker: CrossEncoderReranker, ws: Workspace, query: str) -> None:
    hits = ws.search(query, top_k=40).hits
    out = reranker.rerank(query, hits, top_n=len(hits))
    model = reranker.load()
    own = model.predict([(query, index_text(h.unit)) for h in hits])
    expected = [hits[i].unit.unit_id for i in sorted(range(len(hits)), key=lambda i: -own[i])]
    assert [h.unit.unit_id for h in out] == expected
    assert all(h.scores.fused_rank is not None for h in out)


def test_tiny_model_reproduces_its_own_ordering(
    tiny_cross_encoder: Path, sample_ws: Workspace
) -> None:
    reranker = CrossEncoderReranker(
        str(tiny_cross_encoder), top_n=5, max_length=128, precision="fp32"
    )
    _check_exact_order(reranker, sample_ws, "security incident report within one hour")
    assert (
        len(reranker.rerank("vpn", sample_ws.search("vpn", top_k=20, principal=READER).hits)) == 5
    )


@pytest.mark.skipif(not CE_SCIFACT.exists(), reason="../shared/models/ce-minilm-scifact absent")
def test_shared_cross_encoder_reproduces_its_own_ordering(sample_ws: Workspace) -> None:
    reranker = CrossEncoderReranker(str(CE_SCIFACT), top_n=12, precision="fp32")
    _check_exact_order(reranker, sample_ws, "What is the deadline to report a security incident?")


def test_missing_model_says_how_to_point_at_a_local_copy(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(str(tmp_path / "no-such-model"))
    with pytest.raises(ModelLoadError, match="local folder"):
        reranker.score("q", ["p"])


@pytest.mark.parametrize(("backend", "precision"), [("torch", "int8"), ("onnx", "bf16")])
def test_impossible_backend_precision(backend: str, precision: str) -> None:
    with pytest.raises(ConfigurationError):
        CrossEncoderReranker("x", backend=backend, precision=precision)  # type: ignore[arg-type]


def test_workspace_rerank_keeps_top_n(tiny_cross_encoder: Path, sample_ws: Workspace) -> None:
    sample_ws.use_reranker(CrossEncoderReranker(str(tiny_cross_encoder), top_n=4))
    try:
        result = sample_ws.search(
            "prazo de cobrança", rerank=True, top_k=4, candidates=20, principal=READER
        )
    finally:
        sample_ws.use_reranker(None)
    assert len(result.hits) == 4
    assert [h.scores.rerank_rank for h in result.hits] == [1, 2, 3, 4]
    assert result.trace.stage("rerank") is not None


@pytest.mark.parametrize(
    ("asked", "native", "device", "expected"),
    [
        (("auto", "auto"), "fp32", None, ("onnx", "int8")),
        (("auto", "auto"), "bf16", None, ("torch", "bf16")),
        (("auto", "auto"), "fp32", "cuda", ("torch", "fp32")),
        (("auto", "fp32"), "fp32", None, ("torch", "fp32")),
        (("auto", "int8"), "bf16", None, ("onnx", "int8")),
        (("auto", "bf16"), "fp32", None, ("torch", "bf16")),
        (("onnx", "auto"), "bf16", None, ("onnx", "fp32")),
        (("torch", "auto"), "fp32", None, ("torch", "fp32")),
        (("torch", "auto"), "bf16", None, ("torch", "bf16")),
    ],
)
def test_auto_takes_the_fast_way_this_machine_has(
    monkeypatch: pytest.MonkeyPatch,
    asked: tuple[str, str],
    native: str,
    device: str | None,
    expected: tuple[str, str],
) -> None:
    import trilha.rerank.cross_encoder as ce

    monkeypatch.setattr(ce, "native_bf16_precision", lambda: native)  # the CPU probe only
    reranker = CrossEncoderReranker("m", backend=asked[0], precision=asked[1], device=device)  # type: ignore[arg-type]
    assert (reranker.backend, reranker.precision) == expected
    native_bf16 = expected[1] == "bf16" and native == "bf16"  # emulated bf16 keeps batches of 4
    cpu_batch = ce.CPU_BF16_BATCH if native_bf16 else ce.CPU_BATCH
    assert reranker.batch_size == (ce.GPU_BATCH if device else cpu_batch)
    assert CrossEncoderReranker("m", batch_size=7).batch_size == 7


def test_native_bf16_is_read_from_the_cpu_flags() -> None:
    from trilha.rerank.cross_encoder import native_bf16_precision

    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if not flags:
        pytest.skip("no /proc/cpuinfo here")
    native = " avx512_bf16" in flags or " amx_bf16" in flags
    assert native_bf16_precision() == ("bf16" if native else "fp32")
