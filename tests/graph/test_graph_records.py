"""Explicit records: the JSONL/JSON format, validation with line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.errors import BadRequestError
from trilha.graph.build.records import (
    EdgeRecord,
    NodeRecord,
    check_known,
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
        "line 4: BELONGS_TO goes from ['DecisionPoint', 'Department', 'Doc', 'OKR', 'Process', "
        "'Project', 'Purpose', 'StrategicObjective', 'Task'] to ['Department', 'Org', 'Process', "
        "'Project'], not from Org to Task",
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


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"kind":"node","label":"Fato","id":"bad\\u0000id"}', "id holds control character U+0000"),
        ('{"kind":"node","label":"Criterio","id":"   "}', "id is empty"),
        ('{"kind":"node","label":"Task","id":"t\\u0007"}', "id holds control character U+0007 at"),
        (
            '{"kind":"edge","type":"HAS_CRITERIO","source":"Doc:d","target":"Criterio: \\t"}',
            "the id of Criterio holds control character U+0009",
        ),
        (
            '{"kind":"edge","type":"HAS_FATO","source":"Doc:\\u0000","target":"Fato:f"}',
            "the id of Doc holds control character U+0000",
        ),
        ('{"kind":"node","label":"User","id":"u","props":{"name":" "}}', "props.name is empty"),
        ('{"kind":"node","label":"Fato","id":"f","props":{"text":"a\\u0000"}}', "props.text"),
        (
            '{"kind":"node","label":"Fato","id":"f","props":{"tags":["\\ud800"]}}',
            "props.tags holds a NUL",
        ),
    ],
)
def test_control_characters_and_blank_ids_are_refused(line: str, expected: str) -> None:
    text = '{"kind":"node","label":"Task","id":"ok"}\n' + line
    with pytest.raises(BadRequestError) as err:
        loads_records(text)
    message = str(err.value)
    assert f"line 2: {expected}" in message and "line 1" not in message
    assert "\n" not in message


def test_multiline_text_props_are_fine() -> None:
    (r,) = loads_records('{"kind":"node","label":"Fato","id":"f","props":{"text":"a\\nb\\tc"}}')
    assert isinstance(r, NodeRecord) and r.props["text"] == "a\nb\tc"


def test_load_records_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind":"node","label":"Taks","id":"t"}\n')
    with pytest.raises(BadRequestError, match=r"bad\.jsonl: invalid graph records: line 1:"):
        load_records(bad)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"kind":"node","label":"Task","id":"a\xe7\xe3o"}\n')
    with pytest.raises(BadRequestError, match=r"latin\.jsonl: not UTF-8 text \(byte 37\)"):
        load_records(latin)
    with pytest.raises(BadRequestError, match="cannot read the records file"):
        load_records(tmp_path / "missing.jsonl")


def test_check_known_lists_every_phantom() -> None:
    records = loads_records(
        "\n".join(
            [
                '{"kind":"edge","type":"HAS_FATO","source":"Doc:d1","target":"Fato:f"}',
                '{"kind":"edge","type":"HAS_FATO","source":"Doc:ghost","target":"Fato:f"}',
                "",
                '{"kind":"edge","type":"REFERENCES","source":"Task:t","target":"Chunk:d1#9"}',
                '{"kind":"node","label":"Doc","id":"ghost2","props":{"title":"x"}}',
            ]
        )
    )
    with pytest.raises(BadRequestError) as err:
        check_known(records, {"d1"}, {"d1#0"})
    message = str(err.value)
    assert message.startswith("graph records refused: line 2: source Doc:ghost is not a document")
    assert "line 4: target Chunk:d1#9 is not a unit of this workspace" in message
    assert "line 5: node Doc:ghost2" in message and "line 1" not in message
    check_known(records, None, None)  # nothing known: nothing checked
