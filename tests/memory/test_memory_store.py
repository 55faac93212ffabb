"""The memory store: turns per user, conversation and project; recent context under a budget;
turns are personal."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta, timezone
from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.memory.conftest import T0, StepClock
from trilha.errors import BadRequestError, WorkspaceError
from trilha.memory.context import pack
from trilha.memory.store import MEMORY_FILE, MemoryStore
from trilha.memory.turns import Turn
from trilha.tokens import count_tokens


def texts(turns: tuple[Turn, ...] | list[Turn]) -> list[str]:
    return [t.text for t in turns]


def test_turns_are_stored_newest_first_with_the_clock(memory: MemoryStore) -> None:
    first = memory.record_turn("ana", "c1", "user", "Quais tarefas estão atrasadas?")
    memory.record_turn("ana", "c1", "assistant", "Duas: ROPA e DPIA.", project_id="p1")
    assert first.created_at == T0 + timedelta(minutes=1)
    assert first.created_at.tzinfo is UTC and first.project_id is None
    assert texts(memory.turns("ana")) == ["Duas: ROPA e DPIA.", "Quais tarefas estão atrasadas?"]
    assert texts(memory.turns("ana", project_id="p1")) == ["Duas: ROPA e DPIA."]
    assert texts(memory.turns("ana", limit=1)) == ["Duas: ROPA e DPIA."]
    assert memory.on_server or memory.path == memory.path.parent / MEMORY_FILE


def test_a_given_time_is_kept_in_utc_and_orders_the_turns(memory: MemoryStore) -> None:
    brasilia = datetime(2025, 6, 1, 7, 0, tzinfo=timezone(timedelta(hours=-3)))
    old = memory.record_turn("ana", "c1", "user", "older", created_at=brasilia)
    assert old.created_at == datetime(2025, 6, 1, 10, 0, tzinfo=UTC)
    assert old.created_at.tzinfo is UTC
    memory.record_turn("ana", "c1", "user", "newer")  # the clock: 2025-06-02
    assert texts(memory.turns("ana")) == ["newer", "older"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "   "}, "text is empty"),
        ({"user_id": ""}, "user_id '' is empty"),
        ({"role": "system"}, "role: input should be 'user' or 'assistant'"),
        ({"created_at": datetime(2025, 1, 1)}, "created_at 2025-01-01T00:00:00 has no time zone"),
    ],
)
def test_a_bad_turn_is_one_line_naming_the_field(
    memory: MemoryStore, kwargs: dict[str, object], message: str
) -> None:
    args = {"user_id": "ana", "conversation_id": "c1", "role": "user", "text": "hi", **kwargs}
    with pytest.raises(BadRequestError) as e:
        memory.record_turn(**args)  # type: ignore[arg-type]
    assert str(e.value).startswith(message) and "\n" not in str(e.value)
    assert memory.turns("ana") == []


def _conversations(memory: MemoryStore) -> None:
    """ana: c-old (project p1), c-other (project p2), then c-now; bia: c-now and c-old."""
    memory.record_turn("ana", "c-old", "user", "ROPA do projeto", project_id="p1")
    memory.record_turn("bia", "c-now", "user", "segredo da bia no c-now")
    memory.record_turn("ana", "c-other", "user", "orçamento do outro projeto", project_id="p2")
    memory.record_turn("bia", "c-old", "user", "outro segredo da bia", project_id="p1")
    memory.record_turn("ana", "c-now", "user", "Quais tarefas estão atrasadas?", project_id="p1")
    memory.record_turn("ana", "c-now", "assistant", "Duas: ROPA e DPIA.", project_id="p1")


def test_turns_are_personal_whatever_the_conversation_or_project(memory: MemoryStore) -> None:
    _conversations(memory)
    for user, other in (("ana", "bia"), ("bia", "ana")):
        seen = memory.turns(user, limit=100)
        seen += memory.turns(user, conversation_id="c-now") + memory.turns(user, project_id="p1")
        ctx = memory.get_recent_context(user, conversation_id="c-now", max_tokens=10_000)
        seen += [*ctx.working_set, *ctx.episodic]
        assert seen and {t.user_id for t in seen} == {user}
        assert not any(other in t.text for t in seen)
    assert memory.turns("carla") == []
    empty = memory.get_recent_context("carla", conversation_id="c-now", max_tokens=10_000)
    assert empty.working_set == empty.episodic == () and empty.tokens == 0


def test_reads_need_a_real_user(memory: MemoryStore) -> None:
    with pytest.raises(BadRequestError, match="user_id"):
        memory.turns(" ")
    with pytest.raises(BadRequestError, match="user_id"):
        memory.get_recent_context("", max_tokens=100)
    with pytest.raises(BadRequestError, match="max_tokens is -1"):
        memory.get_recent_context("ana", max_tokens=-1)


def test_recent_context_puts_this_conversation_first_then_the_project(
    memory: MemoryStore,
) -> None:
    _conversations(memory)
    ctx = memory.get_recent_context("ana", project_id="p1", conversation_id="c-now", max_tokens=500)
    assert texts(ctx.working_set) == ["Duas: ROPA e DPIA.", "Quais tarefas estão atrasadas?"]
    assert texts(ctx.episodic) == ["ROPA do projeto"]  # p2's turn is another project's
    assert ctx.tokens == sum(count_tokens(t) for t in [*texts(ctx.working_set), "ROPA do projeto"])
    assert ctx.dropped == 0
    every = memory.get_recent_context("ana", conversation_id="c-now", max_tokens=500)
    assert texts(every.episodic) == ["orçamento do outro projeto", "ROPA do projeto"]
    alone = memory.get_recent_context("ana", max_tokens=500)
    assert alone.working_set == () and len(alone.episodic) == 4  # every conversation is earlier


def test_the_budget_is_never_exceeded_and_says_what_it_dropped(memory: MemoryStore) -> None:
    _conversations(memory)
    newest = count_tokens("Duas: ROPA e DPIA.")
    question = count_tokens("Quais tarefas estão atrasadas?")
    old = count_tokens("ROPA do projeto")
    assert (newest, question, old) == (10, 10, 4)  # cl100k_base
    ctx = memory.get_recent_context("ana", project_id="p1", conversation_id="c-now", max_tokens=15)
    assert texts(ctx.working_set) == ["Duas: ROPA e DPIA."]  # the question (10) no longer fits
    assert texts(ctx.episodic) == ["ROPA do projeto"]  # but the older, shorter turn does
    assert (ctx.tokens, ctx.dropped) == (14, 1)
    none = memory.get_recent_context("ana", conversation_id="c-now", max_tokens=0)
    assert (none.tokens, none.dropped, none.working_set, none.episodic) == (0, 4, (), ())


TEXTS = st.text(st.characters(blacklist_characters="\x00"), min_size=1, max_size=60).filter(
    str.strip
)


def _turn(i: int, conversation: str, text: str) -> Turn:
    return Turn(
        turn_id=f"t{i}",
        user_id="ana",
        conversation_id=conversation,
        role="user",
        text=text,
        created_at=T0 - timedelta(minutes=i),
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(TEXTS, max_size=12),
    st.lists(TEXTS, max_size=12),
    st.integers(0, 80),
)
def test_pack_keeps_the_newest_that_fit_and_never_exceeds(
    working: list[str], episodic: list[str], budget: int
) -> None:
    w = [_turn(i, "now", t) for i, t in enumerate(working)]
    e = [_turn(i + 100, "old", t) for i, t in enumerate(episodic)]
    ctx = pack(w, e, budget)
    kept = [*ctx.working_set, *ctx.episodic]
    assert ctx.tokens == sum(count_tokens(t.text) for t in kept) <= budget
    assert ctx.dropped == len(w) + len(e) - len(kept)
    assert [t.turn_id for t in ctx.working_set] == [t.turn_id for t in w if t in ctx.working_set]
    room = budget - sum(count_tokens(t.text) for t in ctx.working_set)
    for t in w:  # a working turn left out did not fit in what the newer ones left
        if t not in ctx.working_set:
            newer = [k for k in ctx.working_set if k.created_at > t.created_at]
            assert count_tokens(t.text) > budget - sum(count_tokens(k.text) for k in newer)
    assert ctx.tokens - (budget - room) == sum(count_tokens(t.text) for t in ctx.episodic)


def test_import_turns_is_checked_whole_and_idempotent(memory: MemoryStore, tmp_path: Path) -> None:
    rows = [
        {"user_id": "ana", "conversation_id": "c1", "role": "user", "text": "oi", "turn_id": "a"},
        {
            "user_id": "ana",
            "conversation_id": "c1",
            "role": "assistant",
            "text": "olá",
            "project_id": "p1",
            "created_at": "2025-06-01T12:00:00-03:00",
            "turn_id": "b",
        },
    ]
    good = tmp_path / "turns.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    assert memory.import_turns(good) == 2
    assert memory.import_turns(good) == 0
    stored = {t.turn_id: t for t in memory.turns("ana")}
    assert stored["b"].created_at == datetime(2025, 6, 1, 15, 0, tzinfo=UTC)
    assert stored["b"].project_id == "p1" and stored["a"].created_at > stored["b"].created_at


def test_the_sample_turns_import_once(memory: MemoryStore) -> None:
    """``trilha demo`` imports them on every run: a second run must add no duplicates."""
    sample = Path(str(files("trilha.samples") / "memory" / "turns.jsonl"))
    assert memory.import_turns(sample) == 7
    assert memory.import_turns(sample) == 0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", ":2: not valid JSON"),
        ('["a list"]', ":2: each line must be a JSON object"),
        ('{"user_id": "bia", "conversation_id": "c", "role": "user"}', ":2: text: field required"),
        (
            '{"user_id": "bia", "conversation_id": "c", "role": "user", "text": "x", "mood": 1}',
            ":2: mood: extra inputs are not permitted",
        ),
        (
            '{"user_id": "bia", "conversation_id": "c", "role": "user", "text": "x", '
            '"created_at": "2025-06-01T10:00:00"}',
            ":2: created_at 2025-06-01T10:00:00 has no time zone",
        ),
    ],
)
def test_a_bad_turns_file_names_its_line_and_writes_nothing(
    memory: MemoryStore, tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "turns.jsonl"
    ok = '{"user_id": "bia", "conversation_id": "c", "role": "user", "text": "first"}'
    path.write_text(ok + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(BadRequestError) as e:
        memory.import_turns(path)
    assert str(e.value).startswith(f"{path}{message}") and "\n" not in str(e.value)
    assert memory.turns("bia") == []


def test_a_missing_turns_file_is_one_line(memory: MemoryStore, tmp_path: Path) -> None:
    with pytest.raises(BadRequestError, match="cannot read the turns file"):
        memory.import_turns(tmp_path / "nope.jsonl")


def test_threads_writing_together_lose_nothing(memory: MemoryStore) -> None:
    def write(user: str) -> None:
        for i in range(50):
            memory.record_turn(user, "c", "user", f"{user} {i}")

    threads = [threading.Thread(target=write, args=(f"u{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in range(4):
        assert sorted(texts(memory.turns(f"u{n}", limit=100))) == sorted(
            f"u{n} {i}" for i in range(50)
        )


def test_a_file_of_a_newer_schema_is_refused(memory_at: Path | str) -> None:
    store = MemoryStore(memory_at, clock=StepClock())
    store.set_meta("turns_schema", "99")
    store.close()
    with pytest.raises(WorkspaceError, match="turns_schema 99 is newer"):
        MemoryStore(memory_at)


def test_a_workspace_whose_store_is_on_postgresql_keeps_its_memory_there(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.memory.jobs_helpers import job
    from trilha.memory import JobLog

    folder = tmp_path / "ws"
    monkeypatch.setenv("TRILHA_STORE_URL", store_url)  # as the workspace's own store is
    memory, log = MemoryStore.in_workspace(folder), JobLog.in_workspace(folder)
    try:
        memory.record_turn("ana", "c1", "user", "Quais tarefas estão atrasadas?")
        log.record(job(0))
    finally:
        memory.close()
        log.close()
    assert not (folder / MEMORY_FILE).exists()  # nothing beside the folder of one machine
    monkeypatch.delenv("TRILHA_STORE_URL")
    shared, jobs = MemoryStore(store_url), JobLog.in_workspace(folder, store_url=store_url)
    try:  # another process, another machine: the same database
        assert texts(shared.turns("ana")) == ["Quais tarefas estão atrasadas?"]
        assert jobs.get(job(0).id) is not None
    finally:
        shared.close()
        jobs.close()
    local = MemoryStore.in_workspace(folder)  # no store URL: the folder's file
    local.close()
    assert (folder / MEMORY_FILE).exists()
