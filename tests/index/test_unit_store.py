"""The unit store's contract, the same in a SQLite file and on a PostgreSQL server: documents
replaced whole, the deletion log a lexical index catches up from, the records intent log, the
migrations; and on a server, the one writer's lock and a server that does not answer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from trilha.errors import BackendUnavailableError
from trilha.index.docstore import STORE_FILE, WRITER_LOCK, DocStore
from trilha.testing.loopback import free_port
from trilha.types import TextUnit


def _units(doc_id: str, *texts: str, lang: str = "en") -> list[TextUnit]:
    return [
        TextUnit(unit_id=f"{doc_id}#{i}", doc_id=doc_id, text=t, lang=lang)
        for i, t in enumerate(texts)
    ]


def _put(store: DocStore, doc_id: str, *texts: str, lang: str = "en", origin: str = "f") -> None:
    units = _units(doc_id, *texts, lang=lang)
    store.replace_doc(doc_id, f"h-{texts}", None, units, [t.split() for t in texts], origin)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DocStore]:
    where = request.getfixturevalue("store_url") if request.param == "postgres" else None
    opened = DocStore(where or tmp_path / STORE_FILE)
    yield opened
    opened.close()


def test_documents_are_replaced_whole_and_changes_read_only_what_moved(store: DocStore) -> None:
    _put(store, "a", "alpha one", "alpha two")
    _put(store, "b", "beta one", lang="pt")
    start = store.changes(0, 0)
    assert [row for row, _, _ in start.added] == [1, 2, 3] and start.deleted == []
    assert start.generation == store.generation == 2 and start.seq == 0
    _put(store, "a", "alpha three")  # a's two rows go, one new row comes
    moved = store.changes(3, start.seq)
    assert sorted(moved.deleted) == [1, 2] and not moved.rewritten
    assert [row for row, _, tokens in moved.added] == [4] and moved.added[0][2] == "alpha three"
    assert store.doc_ids_from("f") == ["b", "a"]  # the rewritten document is written last
    assert store.unit_ids() == {"a#0", "b#0"} and store.count() == 2
    assert store.languages() == Counter({"en": 1, "pt": 1})
    assert store.delete_doc("b") == 1 and store.doc_ids() == ["a"]
    last = store.changes(4, moved.seq, kept=True)
    assert last.deleted == [3] and [row for row, _ in last.kept] == [4]


def test_a_pruned_log_still_says_where_it_ends(store: DocStore) -> None:
    _put(store, "a", "one", "two")
    store.delete_doc("a")
    seq = store.changes(0, 0).seq
    assert seq == 2
    store.prune_log(seq)
    store.prune_log(1)  # an older position never moves the mark back
    after = store.changes(0, 0)
    assert (after.seq, after.pruned, after.deleted) == (2, 2, [])


def test_pending_marks_and_records_entries_round_trip(store: DocStore) -> None:
    store.mark_pending(["b", "a"])
    store.mark_pending(["a"])  # marked twice is marked once
    assert store.pending_docs() == ["a", "b"]
    store.clear_pending(["a", "b"])
    assert store.pending_docs() == []
    first = store.records.log("org.jsonl", 2, '{"acl": []}', "{}\n{}")
    second = store.records.log("more.jsonl", 1, "{}", "{}")
    assert second > first
    assert store.records.pending() == [(first, "org.jsonl", 2), (second, "more.jsonl", 1)]
    assert store.records.logged(first) == ('{"acl": []}', "{}\n{}")
    store.records.clear(first)
    assert [entry for entry, _, _ in store.records.pending()] == [second]


def test_migrations_rewrite_once_and_are_logged_as_rewrites(store: DocStore) -> None:
    _put(store, "a", "old words")
    assert store.migrate("access", "9", lambda body: body.replace("old", "new")) == ["a#0"]
    assert store.migrate("access", "9", lambda body: body) is None
    assert store.get(["a#0", "nope"])["a#0"].text == "new words"
    assert store.retokenize(lambda unit: ["x"], "v-test") == 1
    assert store.retokenize(lambda unit: ["x"], "v-test") == 0
    changes = store.changes(1, 0)
    assert changes.rewritten and changes.added == []
    assert store.get_meta("tokenizer") == "v-test"


def test_one_writer_holds_a_store_on_a_server(store_url: str) -> None:
    first, second = DocStore(store_url), DocStore(store_url)
    try:
        assert first.on_server and first.claim(WRITER_LOCK)
        assert not second.claim(WRITER_LOCK)
        first.close()  # the server drops the lock with its holder's connection
        assert second.claim(WRITER_LOCK)
    finally:
        second.close()


def test_a_nul_character_in_a_unit_does_not_stop_the_next_ingest(store: DocStore) -> None:
    units = _units("a", "before \x00 after")  # the tokenizer drops the NUL; the text keeps it
    store.replace_doc("a", "h", None, units, [["before", "after"]])
    _put(store, "b", "plain", lang="pt")
    assert store.languages() == Counter({"en": 1, "pt": 1})
    assert store.get(["a#0"])["a#0"].text == "before \x00 after"


@pytest.mark.parametrize(
    "secret", ["s3cret", "pa%ss", "pa/ss", "pa@ss", "pa:ss", "pa?ss"], ids=lambda s: s
)
def test_a_server_that_does_not_answer_is_one_line_without_the_password(secret: str) -> None:
    pytest.importorskip("psycopg", reason="needs trilha[postgres]")
    port = free_port()
    for url in (
        f"postgresql://trilha:{secret}@127.0.0.1:{port}/corpus",
        f"postgresql://trilha:{secret}@127.0.0.1:{port},127.0.0.1:{free_port()}/corpus",
    ):
        with pytest.raises(BackendUnavailableError) as caught:
            DocStore(url)
        message = str(caught.value)
        assert message.startswith("the store at postgresql://") and "\n" not in message
        assert "start it or fix TRILHA_STORE_URL" in message
        assert secret not in message and "trilha:" not in message, message


def test_a_reader_needs_no_right_to_change_the_database(store_url: str) -> None:
    import psycopg

    DocStore(store_url).close()  # the first open makes the tables
    with psycopg.connect(store_url, autocommit=True) as admin:
        admin.execute("CREATE ROLE reader LOGIN")
        admin.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    reading = store_url.replace("://trilha@", "://reader@")
    store = DocStore(reading)
    try:
        assert store.count() == 0 and store.generations() == (0, 0)
    finally:
        store.close()


def test_a_lost_connection_is_made_again_for_a_reader_but_not_for_the_writer(
    store_url: str,
) -> None:
    import psycopg

    reader, writer = DocStore(store_url), DocStore(store_url)
    try:
        assert writer.claim(WRITER_LOCK)
        _put(writer, "a", "one")
        with psycopg.connect(store_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        assert reader.count() == 1  # on a new connection
        with pytest.raises(BackendUnavailableError, match="was lost and the writer lock with it"):
            _put(writer, "b", "two")
        again = DocStore(store_url)  # the server dropped the lock: another writer may take it
        assert again.claim(WRITER_LOCK)
        again.close()
    finally:
        reader.close()
        writer.close()
