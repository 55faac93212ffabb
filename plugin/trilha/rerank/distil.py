"""A smaller cross-encoder taught by a larger one on the pairs the answer path reranks.

The student starts as the teacher with some of its layers (spread evenly, the last one kept,
so the classifier head reads the representation it was trained on) and learns the teacher's
scores for the same (question, window) pairs: a mean-squared error on the logits, which keeps
scores comparable, plus a Kullback-Leibler term over each question's candidates, which is the
ranking the answer path keeps its best of. No relevance labels are needed: any questions the
workspace is asked will do. Needs torch and transformers (installed with sentence-transformers);
run once, offline; the student is then an ordinary cross-encoder folder.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trilha.encode.onnx_export import write_atomically
from trilha.errors import BadRequestError, ModelLoadError, requires_extra

#: sentence-transformers' own files, copied from the teacher so the student loads alike.
_ST_FILES = ("config_sentence_transformers.json", "modules.json", "sentence_bert_config.json")


@dataclass
class Group:
    """One question and the windows its answer reranks, with the teacher's logits for them."""

    question: str
    windows: list[str]
    teacher: list[float] = field(default_factory=list)


@dataclass
class Agreement:
    """How closely the student orders a question's windows as the teacher does (means)."""

    top_overlap: float  # share of the teacher's best ``top_n`` the student also puts there
    spearman: float
    mse: float

    def as_dict(self) -> dict[str, float]:
        return {"top_overlap": self.top_overlap, "spearman": self.spearman, "mse": self.mse}


def kept_layers(total: int, layers: int) -> list[int]:
    """``layers`` of ``total`` layer indices spread evenly, first and last included (the last
    alone when ``layers`` is 1)."""
    if not 1 <= layers < total:
        raise BadRequestError(
            f"--layers must be between 1 and {total - 1} (the teacher has {total} layers)"
        )
    if layers == 1:
        return [total - 1]
    return sorted({round(i * (total - 1) / (layers - 1)) for i in range(layers)})


def _torch() -> Any:
    with requires_extra("torch", "distilling a reranker"):
        import torch
        import transformers  # noqa: F401  (checked here: the student is built with it)
    return torch


def load(model: str) -> tuple[Any, Any]:
    """A cross-encoder folder (or hub id) as a float32 transformers model and its tokenizer."""
    _torch()
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model)  # type: ignore[no-untyped-call]
        net = AutoModelForSequenceClassification.from_pretrained(model)
    except (OSError, ValueError) as e:
        raise ModelLoadError(f"cannot load the cross-encoder {model}: {e}") from e
    if net.config.num_labels != 1:
        raise BadRequestError(f"{model} has {net.config.num_labels} labels; distil needs one")
    return net.float().eval(), tokenizer


def student_of(teacher: Any, layers: int) -> Any:
    """A copy of ``teacher`` keeping :func:`kept_layers` of its encoder layers."""
    import copy

    torch = _torch()
    encoder = getattr(getattr(teacher, teacher.base_model_prefix, None), "encoder", None)
    stack = getattr(encoder, "layer", None)
    if stack is None:
        raise BadRequestError("the teacher is not a BERT-like encoder with a layer stack")
    keep = kept_layers(len(stack), layers)
    student = copy.deepcopy(teacher)
    student_encoder = getattr(student, student.base_model_prefix).encoder
    student_encoder.layer = torch.nn.ModuleList([student_encoder.layer[i] for i in keep])
    student.config.num_hidden_layers = len(keep)
    return student


def _encode(tokenizer: Any, group: Group, max_length: int) -> Any:
    return tokenizer(
        [group.question] * len(group.windows),
        group.windows,
        truncation=True,
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def logits(net: Any, tokenizer: Any, group: Group, max_length: int) -> Any:
    """The model's logits for one group's pairs, without gradients."""
    torch = _torch()
    with torch.inference_mode():
        return net(**_encode(tokenizer, group, max_length)).logits[:, 0]


def teach(
    net: Any,
    tokenizer: Any,
    groups: Sequence[Group],
    max_length: int,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Fill each group's ``teacher`` logits (``progress(done, total)`` after each group)."""
    for done, group in enumerate(groups, 1):
        group.teacher = [float(x) for x in logits(net, tokenizer, group, max_length)]
        if progress is not None:
            progress(done, len(groups))


def agreement(
    net: Any, tokenizer: Any, groups: Sequence[Group], max_length: int, top_n: int
) -> Agreement:
    """The student's :class:`Agreement` with the teacher over ``groups``."""
    overlap = spearman = mse = 0.0
    groups = [g for g in groups if len(g.windows) > 1]  # one window has no order to agree on
    for group in groups:
        got = logits(net, tokenizer, group, max_length).numpy()
        want = np.asarray(group.teacher, dtype=np.float32)
        n = min(top_n, len(want))
        best = set(np.argsort(-got)[:n]) & set(np.argsort(-want)[:n])
        overlap += len(best) / n
        ranks = np.corrcoef(np.argsort(np.argsort(got)), np.argsort(np.argsort(want)))[0, 1]
        spearman += float(np.nan_to_num(ranks, nan=1.0))
        mse += float(np.mean((got - want) ** 2))
    count = max(1, len(groups))
    return Agreement(round(overlap / count, 4), round(spearman / count, 4), round(mse / count, 4))


def rankable(groups: Sequence[Group]) -> list[Group]:
    """The groups with two or more windows (one window teaches no order); a
    :class:`BadRequestError` when there is none."""
    pool = [g for g in groups if len(g.windows) > 1]
    if not pool:
        raise BadRequestError("no question gave two or more windows to rank; nothing to learn")
    return pool


@dataclass
class Schedule:
    """How the student is trained."""

    epochs: float = 1.0
    learning_rate: float = 5e-5
    max_length: int = 80
    seed: int = 0


def train(
    student: Any,
    tokenizer: Any,
    groups: Sequence[Group],
    schedule: Schedule,
    progress: Callable[[int, int, float], None] | None = None,
) -> float:
    """Fit ``student`` to the groups' teacher logits, one question per step; returns the last
    smoothed loss. The rate is ``learning_rate`` times a warm-up factor (rising to 1 over the
    first 50 steps) times a linear decay (from 1 at the first step to 0 at the last)."""
    torch = _torch()
    torch.manual_seed(schedule.seed)
    order = random.Random(schedule.seed)
    pool = rankable(groups)
    steps = max(1, round(schedule.epochs * len(pool)))
    optimiser = torch.optim.AdamW(
        student.parameters(), lr=schedule.learning_rate, weight_decay=0.01
    )
    decay = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda i: min(1.0, (i + 1) / 50) * max(0.0, 1 - i / steps)
    )
    student.train()
    smoothed: float | None = None
    for step in range(steps):
        if step % len(pool) == 0:
            order.shuffle(pool)
        value = _step(student, tokenizer, pool[step % len(pool)], schedule.max_length)
        optimiser.step()
        decay.step()
        optimiser.zero_grad()
        smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
        if progress is not None:
            progress(step + 1, steps, smoothed)
    student.eval()
    return float(smoothed or 0.0)


def _step(student: Any, tokenizer: Any, group: Group, max_length: int) -> float:
    """One question's loss, back-propagated (gradients clipped to norm 1); its value."""
    torch = _torch()
    got = student(**_encode(tokenizer, group, max_length)).logits[:, 0]
    want = torch.tensor(group.teacher)
    loss = torch.nn.functional.mse_loss(got, want) + torch.nn.functional.kl_div(
        torch.log_softmax(got, 0), torch.log_softmax(want, 0), log_target=True, reduction="sum"
    )
    loss.backward()
    torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
    return float(loss.detach())


def check_out(out: Path, teacher: str) -> Path:
    """``out`` resolved, once it is known to be a place the student may be written: not the
    teacher's folder nor one above it, not a file, empty or an earlier cross-encoder folder
    (which it replaces), in a writable folder. Checked before any long step."""
    out = out.expanduser().resolve()
    source = Path(teacher).expanduser().resolve()
    if out == source or out in source.parents:
        raise BadRequestError(f"--out {out} holds the teacher; write the student elsewhere")
    if out.is_file():
        raise BadRequestError(f"--out {out} is a file; name a folder for the student")
    if out.is_dir() and any(out.iterdir()) and not (out / "config.json").exists():
        raise BadRequestError(
            f"--out {out} is a folder with other files in it; name a new or empty folder"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        probe = out.with_name(out.name + ".tmp")
        probe.mkdir(exist_ok=True)
        probe.rmdir()
    except OSError as e:
        raise BadRequestError(f"cannot write the student to {out}: {e.strerror or e}") from None
    return out


def save(student: Any, tokenizer: Any, teacher: str, out: Path) -> None:
    """Write the student as a cross-encoder folder over ``out`` (which :func:`check_out` has
    vetted), through :func:`~trilha.encode.onnx_export.write_atomically`."""

    def write(tmp: Path) -> None:
        student.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        for name in _ST_FILES:
            if (Path(teacher) / name).exists():
                shutil.copy(Path(teacher) / name, tmp / name)
        settings = tmp / _ST_FILES[0]
        if settings.exists():  # the teacher's library versions are not the student's
            data = json.loads(settings.read_text(encoding="utf-8"))
            data.pop("__version__", None)
            settings.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    write_atomically(out, write)


def held_out(groups: list[Group], share: float, seed: int) -> tuple[list[Group], list[Group]]:
    """(training, held-out) groups: ``share`` of them, at least one when there are two."""
    shuffled = list(groups)
    random.Random(seed).shuffle(shuffled)
    n = min(len(shuffled) - 1, max(1, round(share * len(shuffled)))) if share > 0 else 0
    return shuffled[n:], shuffled[:n]


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    return fn(), time.perf_counter() - start
