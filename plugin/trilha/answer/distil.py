"""``trilha distil``'s run: the answer path's pairs, the teacher's scores, the student trained
on them, and how closely it agrees with its teacher on questions it did not learn from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trilha.answer.rerank_pairs import rerank_pairs
from trilha.rerank import distil

if TYPE_CHECKING:
    from trilha.workspace.facade import Workspace


@dataclass
class DistilRequest:
    """What to distil, into what."""

    teacher: str
    out: Path
    layers: int = 4
    epochs: float = 1.0
    learning_rate: float = 5e-5
    held_out: float = 0.1
    candidates: int = 40  # ask's rerank pool (AskParams.k)
    top_n: int = 12  # what ask keeps after rerank (AskParams.top_n)
    seed: int = 0


def run_distil(
    ws: Workspace,
    questions: Sequence[str],
    request: DistilRequest,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Distil ``request.teacher`` into ``request.out`` on ``questions``; the report."""
    say = progress or (lambda line: None)
    max_length = ws.settings.answer_rerank_max_length
    out = distil.check_out(request.out, request.teacher)
    teacher, tokenizer = distil.load(request.teacher)
    total = teacher.config.num_hidden_layers
    student = distil.student_of(teacher, request.layers)  # bad --layers fail before long steps
    groups, seconds = distil.timed(lambda: _groups(ws, questions, request.candidates))
    distil.rankable(groups)  # before the teacher's long scoring
    say(f"{len(groups)} questions with windows, {sum(len(g.windows) for g in groups)} pairs "
        f"({seconds:.0f} s)")  # fmt: skip
    scored = _every(say, 100, "teacher scored {step}/{steps} questions")
    _, seconds = distil.timed(
        lambda: distil.teach(teacher, tokenizer, groups, max_length, lambda i, n: scored(i, n, 0))
    )
    say(f"teacher scored them ({seconds:.0f} s)")
    train, held = distil.held_out(groups, request.held_out, request.seed)
    judged = held or train  # with no held-out share, agreement on what it learnt from
    before = distil.agreement(student, tokenizer, judged, max_length, request.top_n)
    schedule = distil.Schedule(request.epochs, request.learning_rate, max_length, request.seed)
    _, seconds = distil.timed(
        lambda: distil.train(student, tokenizer, train, schedule, _every(say, 100, _STEP))
    )
    after = distil.agreement(student, tokenizer, judged, max_length, request.top_n)
    distil.save(student, tokenizer, request.teacher, out)
    return _report(request, total, groups, train, held) | {
        "max_length": max_length,
        "train_seconds": round(seconds, 1),
        "agreement": {"copied": before.as_dict(), "trained": after.as_dict()},
    }


def _report(
    request: DistilRequest,
    total: int,
    groups: list[distil.Group],
    train: list[distil.Group],
    held: list[distil.Group],
) -> dict[str, Any]:
    return {
        "teacher": request.teacher,
        "out": str(request.out),
        "teacher_layers": total,
        "layers": request.layers,
        "kept": distil.kept_layers(total, request.layers),
        "questions": len(groups),
        "pairs": sum(len(g.windows) for g in groups),
        "trained_on": len(train),
        "held_out": len(held),
        "agreement_on": "held-out questions" if held else "training questions",
        "top_n": request.top_n,
        "epochs": request.epochs,
        "learning_rate": request.learning_rate,
    }


def _groups(ws: Workspace, questions: Sequence[str], k: int) -> list[distil.Group]:
    """The questions that gave windows, as :class:`distil.Group` s."""
    found = rerank_pairs(ws, questions, k)
    return [distil.Group(text, windows) for text, windows in found if windows]


_STEP = "step {step}/{steps}: loss {loss:.4f}"


def _every(say: Callable[[str], None], n: int, line: str) -> Callable[[int, int, float], None]:
    def report(step: int, steps: int, loss: float) -> None:
        if step % n == 0 or step == steps:
            say(line.format(step=step, steps=steps, loss=loss))

    return report
