"""The groundedness judges: lexical overlap, and entailment by a local NLI cross-encoder (a tiny
random one built here, to exercise loading, batching and label lookup)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.answer.grounding import (
    METHOD,
    EntailmentJudge,
    LexicalJudge,
    make_judge,
    score_answer,
    support,
)
from trilha.answer.types import Answer, AnswerCitation, AnswerSentence, AnswerTrace
from trilha.errors import ConfigurationError
from trilha.types import TextUnit

UNIT = TextUnit(unit_id="d#0", doc_id="d", lang="pt",
                text="O prazo prescricional é de cinco anos para dívidas líquidas.")  # fmt: skip
OTHER = TextUnit(unit_id="e#0", doc_id="e", lang="pt", text="Férias pedem trinta dias.")


def _nli(folder: Path, labels: dict[int, str]) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir(parents=True)
    words = ["o", "prazo", "de", "cinco", "anos", "ferias", "dias", "é"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (folder / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(str(folder))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, num_labels=len(labels),
                        id2label=labels, label2id={v: k for k, v in labels.items()},
                        max_position_embeddings=64)  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(str(folder))
    return folder


def _answer(*sentences: tuple[str, list[int]]) -> Answer:
    citations = [
        AnswerCitation(doc_id=u.doc_id, unit_id=u.unit_id, number=n, snippet=u.text)
        for n, u in ((1, UNIT), (2, OTHER))
    ]
    return Answer(
        answer="", citations=citations, trace_id="a-1", trace=AnswerTrace(trace_id="a-1"),
        sentences=[AnswerSentence(text=t, citations=c) for t, c in sentences],
    )  # fmt: skip


def test_lexical_judge_scores_groundedness_and_precision() -> None:
    answer = _answer(("O prazo prescricional é de cinco anos.", [1, 2]),
                     ("A lua é de queijo.", [1]))  # fmt: skip
    units = {u.unit_id: u for u in (UNIT, OTHER)}
    score = score_answer(answer, units, {"d": 1})
    assert (score.sentences, score.supported, score.pairs, score.precise_pairs) == (2, 1, 3, 1)
    assert score.groundedness == 0.5 and score.citation_precision == pytest.approx(1 / 3)
    assert (score.cited_docs, score.relevant_cited_docs) == (2, 1)
    assert support("cinco anos", UNIT) == 1.0 and support("queijo lunar", UNIT) == 0.0
    assert make_judge(None).method == METHOD and isinstance(make_judge(""), LexicalJudge)


def test_entailment_judge_loads_a_local_nli_model(tmp_path: Path) -> None:
    folder = _nli(tmp_path / "nli", {0: "contradiction", 1: "entailment", 2: "neutral"})
    judge = make_judge(str(folder))
    assert isinstance(judge, EntailmentJudge) and judge.index == 1
    assert judge.method.startswith(f"entailment ({folder}")
    verdicts = judge.supported([("O prazo é de cinco anos.", UNIT), ("Férias.", OTHER)])
    assert len(verdicts) == 2 and all(isinstance(v, bool) for v in verdicts)
    assert judge.supported([]) == []
    score = score_answer(_answer(("O prazo é de cinco anos.", [1])), {"d#0": UNIT}, judge=judge)
    assert score.pairs == 1 and score.supported == score.precise_pairs


def test_a_model_without_an_entailment_label_is_refused(tmp_path: Path) -> None:
    folder = _nli(tmp_path / "sentiment", {0: "negative", 1: "positive"})
    with pytest.raises(ConfigurationError, match="no 'entailment' label"):
        EntailmentJudge(str(folder))
