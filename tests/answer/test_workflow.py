"""UC09 end to end on the real sample workspace: citations, edges, guardrails, masking, cache."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from trilha.access import Principal
from trilha.answer import NoAnswer, aask, ask, ask_request
from trilha.answer.context import RERANK_WINDOW_TOKENS, Terms, _SpanCounter, focus
from trilha.answer.nodes import rerank_results
from trilha.answer.run import Run
from trilha.answer.schemas import SchemaViolation, check, schema_of
from trilha.answer.types import NODES, Answer, AskRequest
from trilha.errors import BadRequestError, ConfigurationError
from trilha.remote import TEIClient, TEIReranker
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.testing.tei_server import TEITestServer
from trilha.tokens import count_tokens
from trilha.types import Hit, StageScores, StageTrace, TextUnit
from trilha.workspace import Workspace

MARIA = Principal(
    user_id="maria.cfo", org_ids=["acme"], roles=["board", "finance"], hierarchy_level=3,
    clearance=2,
)  # fmt: skip
ACME = Principal(user_id="ana", org_ids=["acme"], hierarchy_level=1, clearance=1)
ACME_CLEARANCE_0 = Principal(user_id="joao", org_ids=["acme"], hierarchy_level=3, clearance=0)


def _assert_cited(answer: Answer, ws: Workspace) -> None:
    """Every sentence cites, every citation resolves, every sentence is its unit's text."""
    assert answer.answered and 1 <= len(answer.sentences) <= 8
    assert len(answer.answer.splitlines()) == len(answer.sentences)
    by_number = {c.number: c for c in answer.citations}
    assert sorted(by_number) == list(range(1, len(answer.citations) + 1))
    units = ws.units([c.unit_id for c in answer.citations])
    for sentence in answer.sentences:
        assert sentence.citations and all(n in by_number for n in sentence.citations)
        cited = [units[by_number[n].unit_id] for n in sentence.citations]
        assert any(sentence.text.rstrip("…") in " ".join(u.text.split()) for u in cited)
    for c in answer.citations:
        assert c.doc_id == units[c.unit_id].doc_id and c.snippet


def test_answer_cites_every_sentence(sample_ws: Workspace) -> None:
    answer = ask(sample_ws, "Qual é o prazo prescricional para cobrar uma dívida líquida?")
    _assert_cited(answer, sample_ws)
    assert answer.lang == "pt"
    assert {c.doc_id for c in answer.citations} == {"juridico/stj-prescricao-quinquenal-cobranca"}
    assert "cinco anos" in answer.answer
    assert [n.name for n in answer.trace.stages] == list(NODES)
    assert answer.trace.provider == "trilha" and answer.trace.model == "extractive"
    retrieval = answer.metrics.retrieval
    assert retrieval.bm25_hits > 0 and retrieval.ann_hits > 0 and retrieval.rerank_kept == 12
    assert answer.metrics.cost.tokens_in == 0 and answer.metrics.latency_ms > 0
    assert answer.trace.search is not None and answer.trace.principal.startswith("anonymous")
    assert 0 < answer.trace.context_tokens <= 2000


def test_english_question_is_answered_in_english(sample_ws: Workspace) -> None:
    answer = ask(sample_ws, "How quickly must a suspected security incident be reported?",
                 principal=ACME)  # fmt: skip
    _assert_cited(answer, sample_ws)
    assert answer.lang == "en" and "1 hour" in answer.answer
    assert all(c.lang == "en" for c in answer.citations)


def test_invalid_question_stops_at_the_first_edge(sample_ws: Workspace) -> None:
    answer = ask(sample_ws, "  ?? … ")
    assert answer.no_answer == NoAnswer(
        edge="ParseQuery → HybridRetrieve",
        condition="query.valid",
        reason="the question has no words; ask something",
    )
    assert [n.name for n in answer.trace.stages] == ["ParseQuery"] and not answer.citations


def test_no_candidate_stops_at_the_second_edge(sample_ws: Workspace) -> None:
    answer = ask(sample_ws, "prazo prescricional", filters={"doc_ids": ["no/such-doc"]})
    assert answer.no_answer is not None
    assert answer.no_answer.edge == "HybridRetrieve → RerankResults"
    assert answer.no_answer.condition == "candidates.count > 0"
    assert "loosen the filters" in answer.no_answer.reason
    assert [n.name for n in answer.trace.stages] == ["ParseQuery", "HybridRetrieve"]


def test_guardrail_drops_units_above_the_clearance_before_rerank(sample_ws: Workspace) -> None:
    secret = sample_ws.units(["finance/budget-memo-q3-2025#2"])["finance/budget-memo-q3-2025#2"]
    public = sample_ws.doc_units("juridico/stj-dano-moral-atraso-voo")[0]
    run = Run(AskRequest(question="budget", principal=ACME))
    run.text = "budget"
    run.nodes.append(StageTrace(name="RerankResults", latency_ms=0.0))
    run.candidates = [Hit(unit=u, scores=StageScores(fused=1.0)) for u in (secret, public)]
    rerank_results(sample_ws, run)
    assert [h.unit.unit_id for h in run.reranked] == [public.unit_id]
    assert "1 unit(s) above the caller's visibility dropped" in run.warnings[0]


@pytest.mark.parametrize(
    ("principal", "sees_memo"), [(None, False), (ACME_CLEARANCE_0, False), (MARIA, True)]
)
def test_confidential_text_reaches_only_those_cleared(
    sample_ws: Workspace, principal: Principal | None, sees_memo: bool
) -> None:
    answer = ask(sample_ws, "What travel budget cut does the Q3 memo propose?", principal=principal)
    cited = {c.doc_id for c in answer.citations}
    assert ("finance/budget-memo-q3-2025" in cited) is sees_memo
    if principal is not None and principal.clearance == 0:
        units = sample_ws.units([c.unit_id for c in answer.citations])
        assert all(u.sensitivity == 0 for u in units.values())
    if not sees_memo:
        assert "30%" not in answer.model_dump_json()


def test_personal_data_is_masked_in_answer_and_snippets(sample_ws: Workspace) -> None:
    answer = ask(sample_ws, "Qual é o contato do Encarregado de dados (DPO)?", principal=ACME)
    _assert_cited(answer, sample_ws) if "[EMAIL]" not in answer.answer else None
    dumped = answer.model_dump_json()
    assert "dpo@acme.com.br" not in dumped and "3456-7890" not in dumped
    assert "[EMAIL]" in dumped and answer.trace.pii_masked.get("[EMAIL]", 0) >= 1


def test_filters_stated_in_the_question_narrow_the_search(sample_ws: Workspace) -> None:
    answer = ask(sample_ws, "Quais regras do setor de TI valem para fornecedores?", principal=ACME)
    assert answer.trace.query_filters == {"setor": "TI"}
    units = sample_ws.units([c.unit_id for c in answer.citations])
    assert units and all(u.setor == "TI" for u in units.values())


def test_a_stated_filter_that_empties_the_search_is_dropped(sample_ws: Workspace) -> None:
    answer = ask(sample_ws, "What is the travel budget cut in 2031?", principal=MARIA)
    assert answer.answered and answer.trace.query_filters == {}
    assert any("searched without them" in w for w in answer.trace.warnings)


def test_request_filters_win_over_the_question(sample_ws: Workspace) -> None:
    answer = ask(
        sample_ws, "Regras do setor de TI", principal=ACME, filters={"setor": "Financeiro"}
    )
    units = sample_ws.units([c.unit_id for c in answer.citations])
    assert answer.trace.query_filters == {}
    assert all(u.setor == "Financeiro" for u in units.values())


def test_whole_answers_are_cached_per_principal(sample_ws: Workspace) -> None:
    question = "Quantas cotações exige uma compra acima de R$ 5.000?"
    first = ask(sample_ws, question, principal=MARIA)
    again = ask(sample_ws, f"  {question} ", principal=MARIA)
    other = ask(sample_ws, question, principal=ACME_CLEARANCE_0)
    assert not first.trace.cache_hit and again.trace.cache_hit and not other.trace.cache_hit
    assert again.answer == first.answer and again.trace_id == first.trace_id
    assert [n.name for n in again.trace.stages] == ["cache"]
    assert again.metrics.latency_ms < first.metrics.latency_ms


def test_rerank_keeps_top_n(sample_ws: Workspace, tiny_cross_encoder: Path) -> None:
    sample_ws.use_reranker(CrossEncoderReranker(str(tiny_cross_encoder), precision="fp32"))
    try:
        answer = ask(sample_ws, "security incident report deadline", principal=ACME,
                     rerank=True, top_n=4, k=20)  # fmt: skip
    finally:
        sample_ws.use_reranker(None)
    assert answer.metrics.retrieval.rerank_kept == 4
    assert answer.trace.search is not None and answer.trace.search.stage("rerank") is not None
    assert all(c.score is not None for c in answer.citations)


class _Reading:
    """A reranker that keeps what it was given to read and prefers longer passages."""

    top_n = 12

    def __init__(self) -> None:
        self.read: list[str] = []
        self.max_lengths: list[int | None] = []

    def score(
        self, query: str, passages: Sequence[str], max_length: int | None = None
    ) -> list[float]:
        self.read += passages
        self.max_lengths.append(max_length)
        return [float(len(p)) for p in passages]

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int | None = None) -> list[Hit]:
        raise AssertionError("the answer path reranks windows through score()")


def test_rerank_reads_each_candidates_best_window(sample_ws: Workspace) -> None:
    reading = _Reading()
    sample_ws.use_reranker(reading)
    try:
        answer = ask(sample_ws, "How quickly must a security incident be reported to the SOC?",
                     principal=ACME, rerank=True, top_n=3, k=10)  # fmt: skip
    finally:
        sample_ws.use_reranker(None)
    assert len(reading.read) == 10 and answer.metrics.retrieval.rerank_kept == 3
    heads = 40  # title and heading lines on top of the window
    assert all(count_tokens(p) <= RERANK_WINDOW_TOKENS + heads for p in reading.read)
    assert any("within 1 hour of detection" in p for p in reading.read)
    assert answer.trace.search is not None
    stage = answer.trace.search.stage("rerank")
    assert stage is not None and stage.note and "windows" in stage.note
    assert reading.max_lengths == [sample_ws.settings.answer_rerank_max_length]
    assert f"pairs of at most {sample_ws.settings.answer_rerank_max_length}" in stage.note


def test_focus_keeps_a_short_unit_whole_and_cuts_a_long_one_to_its_best_window() -> None:
    long = " ".join(f"Filler sentence number {i} about nothing much." for i in range(60))
    long += " The VPN client must be updated every month. " + long
    unit = TextUnit(unit_id="d#0", doc_id="d", text=long, title="Remote access")
    terms = Terms("How often is the VPN client updated?", "en")
    window = focus(Hit(unit=unit, scores=StageScores()), terms, tokens=60)
    assert window.startswith("Remote access\n") and "VPN client must be updated" in window
    assert count_tokens(window) <= 60 + 5
    short = TextUnit(unit_id="e#0", doc_id="e", text="Short text.", title="T")
    assert focus(Hit(unit=short, scores=StageScores()), terms) == "T\nShort text."


@pytest.mark.parametrize(
    "sentences",
    [
        ["One sentence.", "Another one, with 2024 digits.", "(A bracket) opens it.", "Último."],
        ["図 and 数据库 mixed.", "  leading spaces.", "https://example.org/a?b=c ends.", "Ok!"],
    ],
)
def test_a_windows_token_count_adds_up_from_its_sentences(sentences: list[str]) -> None:
    span = _SpanCounter(sentences)
    for lo in range(len(sentences)):
        for hi in range(lo + 1, len(sentences) + 1):
            assert span(lo, hi) == count_tokens(" ".join(sentences[lo:hi]))


def test_schemas_are_the_seeds_and_are_enforced() -> None:
    assert schema_of("ParseQuery", "input")["required"] == ["query"]
    assert schema_of("HybridRetrieve", "input")["required"] == ["query", "topK"]
    check("BuildAnswer", "output", {"answer": {"text": "x", "citations": []}})
    with pytest.raises(SchemaViolation, match=r"HybridRetrieve output .* candidates/count"):
        check("HybridRetrieve", "output", {"candidates": {"count": "two", "items": []}})
    with pytest.raises(SchemaViolation, match="required"):
        check("BuildAnswer", "output", {"answer": {}})


def test_bad_requests_are_one_clear_line() -> None:
    with pytest.raises(BadRequestError, match=r"params\.k"):
        ask_request("q", k=0)
    with pytest.raises(BadRequestError, match="mode"):
        ask_request("q", mode="graph")
    request = ask_request("q", top_n=3, params={"max_tokens_ctx": 500})
    assert request.params.top_n == 3 and request.params.max_tokens_ctx == 500


def test_sync_ask_inside_an_event_loop_answers_as_aask(sample_ws: Workspace) -> None:
    async def inside() -> None:
        synced = ask(sample_ws, "prazo prescricional quinquenal")
        answer = await aask(sample_ws, "prazo prescricional quinquenal")
        assert answer.answered and synced.answer == answer.answer

    asyncio.run(inside())


def test_a_run_is_summarised_in_one_short_line() -> None:
    """The workflow runtime writes ``repr`` of every event it passes: a run's must not spell
    out its candidates' texts."""
    run = Run(AskRequest(question="What is the deadline to report a security incident?"))
    text = "a long unit text " * 500
    run.candidates = [
        Hit(unit=TextUnit(unit_id=f"d{i}#0", doc_id=f"d{i}", text=text), scores=StageScores())
        for i in range(40)
    ]
    summary = repr(run)
    assert len(summary) < 200 and "40 candidates" in summary and run.trace_id in summary


def test_an_answer_whose_reranker_is_down_keeps_the_fused_order(
    sample_ws: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    question = "Who must a lost laptop be reported to, and how fast?"
    fused = ask(sample_ws, question, principal=ACME, top_n=3, k=10)
    with TEITestServer() as tei:
        tei.fail_next = 10
        sample_ws.use_reranker(TEIReranker(TEIClient(tei.url, retries=0), top_n=3))
        try:
            down = ask(sample_ws, question, principal=ACME, rerank=True, top_n=3, k=10)
        finally:
            sample_ws.use_reranker(None)
        assert [p for p, _ in tei.requests] == ["/rerank"]
    assert not down.trace.cache_hit and down.metrics.retrieval.rerank_kept == 3
    assert [c.unit_id for c in down.citations] == [c.unit_id for c in fused.citations]
    assert down.answer == fused.answer
    assert down.trace.search is not None and down.trace.search.stage("rerank") is None
    warned = [w for w in down.trace.warnings if w.startswith("rerank unavailable (")]
    assert len(warned) == 1 and "HTTP 503" in warned[0]
    assert warned[0].endswith("; kept the fused order")
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == warned


def test_an_answer_asked_to_rerank_without_a_reranker_keeps_the_fused_order(
    sample_ws: Workspace,
) -> None:
    """No reranker configured: the answer keeps the fused order, warned (a search says so as an
    error instead, :func:`trilha.retrieve.pipeline.reranked`)."""
    assert sample_ws.settings.reranker_model is None
    question = "Who must a lost laptop be reported to, and how fast?"
    fused = ask(sample_ws, question, principal=ACME, top_n=3, k=10)
    unranked = ask(sample_ws, question, principal=ACME, rerank=True, top_n=3, k=10)
    assert [c.unit_id for c in unranked.citations] == [c.unit_id for c in fused.citations]
    warned = [w for w in unranked.trace.warnings if w.startswith("rerank unavailable (")]
    assert len(warned) == 1 and "no reranker" in warned[0]
    with pytest.raises(ConfigurationError, match="no reranker"):
        sample_ws.search(question, principal=ACME, rerank=True)
