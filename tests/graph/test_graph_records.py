"""Explicit records: the JSONL/JSON format, validation with line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.errors import BadRequestError
from trilha.graph.records import (
    EdgeRecord,
    NodeRecord,
    dump_records,
    load_records,
    loads_records,
    split_ref,
    validate_record,
)


def test_valid_records(tmp_path: Path) -> None:
    text = (
        '{"kind":"node","label":"Task","id":"t1","props":{"status":"late","hierarchy_level":1}}\n'
        "\n"
        '{"kind":"edge","type":"BELONGS_TO","source":"Task:t1","target":"Project:p:1"}\n'
    )
    records = loads_records(text)
    assert isinstance(records[0], NodeRecord) and records[0].props["status"] == "late"
    assert isinstance(records[1], EdgeRecord)
    assert records[1].endpoints() == (("Task", "t1"), ("Project", "p:1"))
    path = tmp_path / "r.jsonl"
    dump_records(records, path)
    assert load_records(path) == records
    as_json = tmp_path / "r.json"
    as_json.write_text(json.dumps([r.model_dump() for r in records]))
    assert load_records(as_json) == records


def test_errors_name_their_lines() -> None:
    text = "\n".join(
        [
            '{"kind":"node","label":"Task","id":"t1"}',
            '{"kind":"node","label":"Taks","id":"t2"}',
            '{"kind":"node","label":"Task"',
            '{"kind":"edge","type":"BELONGS_TO","source":"Org:o1","target":"Task:t1"}',
            '{"kind":"edge","type":"OWNS","source":"User u1","target":"Task:t1"}',
            '{"kind":"node","label":"Task","id":"t3","props":{"hierarchy_level":-1}}',
            '{"kind":"node","label":"Task","id":"t4","props":{"id":"x"}}',
            '{"kind":"node","label":"Task","id":"t5","props":{"a`b":1}}',
            '{"kind":"node","label":"Task","id":"t6","props":{"nested":{"a":1}}}',
            '{"kind":"wat"}',
            '{"kind":"node","label":"Task","id":""}',
            '{"kind":"edge","type":"DETACH DELETE","source":"Task:t1","target":"Task:t2"}',
        ]
    )
    with pytest.raises(BadRequestError) as err:
        loads_records(text)
    message = str(err.value)
    for expected in [
        "line 2: unknown node label 'Taks'",
        "line 3: invalid JSON",
        "line 4: BELONGS_TO goes from ['Doc', 'Project', 'Task'] to ['Org', 'Project'], "
        "not from Org to Task",
        "line 5: node reference 'User u1' must look like '<Label>:<id>'",
        "line 6: props.hierarchy_level:",
        "line 7: property 'id' is reserved",
        "line 8: property name 'a`b'",
        "line 9: props.nested",
        "line 10:",
        "line 11: id:",
        "line 12: unknown relationship type 'DETACH DELETE'",
    ]:
        assert expected in message
    assert "line 1:" not in message


def test_json_list_items_and_shape() -> None:
    with pytest.raises(BadRequestError, match="item 2: unknown node label"):
        loads_records(
            '[{"kind":"node","label":"Doc","id":"d"},{"kind":"node","label":"X","id":"y"}]',
            jsonl=False,
        )
    with pytest.raises(BadRequestError, match="must hold a list"):
        loads_records('{"kind":"node"}', jsonl=False)
    with pytest.raises(BadRequestError, match="line 1, column"):
        loads_records("[", jsonl=False)


def test_peso_words_and_refs() -> None:
    r = validate_record(
        {"kind": "node", "label": "Criterio", "id": "c", "props": {"peso": "Médio"}}
    )
    assert isinstance(r, NodeRecord)
    with pytest.raises(BadRequestError):
        validate_record(
            {"kind": "node", "label": "Criterio", "id": "c", "props": {"peso": "muito"}}
        )
    assert split_ref("Doc:a:b") == ("Doc", "a:b")
    for bad in ("Doc:", ":x", "doc:x"):
        with pytest.raises(BadRequestError):
            split_ref(bad)
