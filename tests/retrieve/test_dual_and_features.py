"""Dual-vector search's divergence report and feature search's filter semantics, on the real
sample workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.access import Principal
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError
from trilha.ingest.loaders import SourceDocument
from trilha.retrieve.dual import dual_search
from trilha.retrieve.features import FeatureFilters, feature_search
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

ACME = Principal(user_id="ana", org_ids=["acme"], hierarchy_level=1, clearance=1)


def test_dual_search_classifies_by_the_lists_each_unit_made(sample_ws: Workspace) -> None:
    result = dual_search(
        sample_ws,
        "o voo atrasou oito horas e o passageiro perdeu um compromisso",
        "prazo prescricional de cinco anos para cobrança de dívida líquida",
        top_k=4,
    )
    by_id = {h.unit.unit_id: h for h in result.hits}
    assert sum(result.counts.values()) == len(result.hits) and 4 <= len(result.hits) <= 8
    for hit in result.hits:
        assert (hit.fact_rank is not None, hit.thesis_rank is not None) == {
            "overlap": (True, True), "fact_only": (True, False), "thesis_only": (False, True)
        }[hit.category]  # fmt: skip
    facts_top = next(h for h in result.hits if h.fact_rank == 1)
    thesis_top = next(h for h in result.hits if h.thesis_rank == 1)
    assert facts_top.unit.doc_id == "juridico/stj-dano-moral-atraso-voo"
    assert thesis_top.unit.doc_id == "juridico/stj-prescricao-quinquenal-cobranca"
    assert facts_top.fact_score > facts_top.thesis_score
    assert thesis_top.thesis_score > thesis_top.fact_score
    means = [h.fact_score + h.thesis_score for h in result.hits]
    assert means == sorted(means, reverse=True) and by_id


def test_dual_search_respects_visibility_and_filters(sample_ws: Workspace) -> None:
    anonymous = dual_search(sample_ws, "budget cut travel", "board approval of budget", top_k=10)
    assert all(h.unit.visibility == "public" for h in anonymous.hits)
    only_pt = dual_search(sample_ws, "atraso de voo", "dano moral", top_k=5, principal=ACME,
                          filters={"lang": "pt"})  # fmt: skip
    assert only_pt.hits and all(h.unit.lang == "pt" for h in only_pt.hits)
    with pytest.raises(BadRequestError, match="both the facts and the thesis"):
        dual_search(sample_ws, "fatos", "  ")


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"tipo_recurso": "REsp"}, {"juridico/stj-dano-moral-atraso-voo",
                                    "legal/stj-software-licence-breach"}),
        ({"tipo_recurso": "AREsp"}, {"juridico/stj-prescricao-quinquenal-cobranca"}),
        ({"tipo_recurso": "resp"}, set()),  # exact, case-sensitive
        ({"resultado": "provido"}, {"legal/stj-software-licence-breach"}),
        ({"ministro_relator": "Vasconcelos"}, {"juridico/stj-dano-moral-atraso-voo"}),
        ({"categorias": ["consumidor", "nada"]}, {"juridico/stj-dano-moral-atraso-voo"}),
        ({"dispositivo_norma": "CC/2002"}, {"juridico/stj-prescricao-quinquenal-cobranca"}),
        ({"unanimidade": False}, {"legal/stj-software-licence-breach"}),
        ({"argumento_vencedor": "CIRCUNSTÂNCIAS CONCRETAS"},
         {"juridico/stj-dano-moral-atraso-voo"}),
        ({"argumento_perdedor": "dez anos", "unanimidade": True},
         {"juridico/stj-prescricao-quinquenal-cobranca"}),
    ],
)  # fmt: skip
def test_feature_filters_follow_the_seed(
    sample_ws: Workspace, filters: dict[str, object], expected: set[str]
) -> None:
    result = feature_search(sample_ws, filters)
    assert {d.doc_id for d in result.documents} == expected and result.total == len(expected)
    for doc in result.documents:
        assert doc.citation.doc_id == doc.doc_id and "tipo_recurso" in doc.features


def test_feature_search_reads_only_what_the_caller_may_see(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    decision = {"tipo_recurso": "REsp", "resultado": "provido", "lang": "pt"}
    docs = [
        SourceDocument(doc_id="pub", text="Decisão pública.", meta=decision),
        SourceDocument(doc_id="acme", text="Decisão interna.",
                       meta={**decision, "visibility": "org", "org_id": "acme"}),
    ]  # fmt: skip
    with Workspace.open(tmp_path / "ws", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(docs)
        found = [feature_search(ws, {"resultado": "provido"}, p) for p in (None, ACME)]
    assert [{d.doc_id for d in f.documents} for f in found] == [{"pub"}, {"pub", "acme"}]
    assert FeatureFilters(unanimidade=True).matches({"unanimidade": True})
    assert not FeatureFilters(unanimidade=True).matches({"unanimidade": "true"})


def test_bad_feature_filters_are_one_line(sample_ws: Workspace) -> None:
    with pytest.raises(BadRequestError, match="categorias"):
        feature_search(sample_ws, {"categorias": []})
    with pytest.raises(BadRequestError, match="juiz"):
        feature_search(sample_ws, {"juiz": "x"})


def test_cli_dual_search_and_features(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trilha.cli.main import main
    from trilha.samples import load_samples

    ws_path = tmp_path / "ws"
    with Workspace.open(ws_path, TrilhaSettings(), create=True) as ws:
        load_samples(ws)
    args = ["-w", str(ws_path)]
    assert main(["dual-search", *args, "--facts", "voo atrasado", "--thesis", "prescrição",
                 "-k", "2", "--json"]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert sum(report["counts"].values()) == len(report["hits"]) > 0
    assert main(["features", *args, "--unanimidade", "false"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 document(s)") and "legal/stj-software-licence-breach" in out
    assert main(["features", *args, "--categorias", "consumidor", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 1
    assert main(["dual-search", *args, "--facts", " ", "--thesis", "x"]) == 2
    assert "both the facts and the thesis" in capsys.readouterr().err
