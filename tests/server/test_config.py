"""The service file: what it accepts, and one line naming the place for what it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.errors import BadRequestError
from trilha.server import ServiceConfig, key_digest, load_service_config

GOOD = """\
projects:
  atlas: {workspace: ws-atlas, tenant: acme}
  beta: {workspace: /abs/ws-beta, tenant: beta}
keys:
  - sha256: %s
    tenant: acme
    user: ana
  - key: plain-key-for-tests-only
    tenant: beta
    principal: {user_id: bea, clearance: 1}
    operator: true
"""


def test_a_good_file_loads_with_paths_taken_from_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "service.yaml"
    path.write_text(GOOD % key_digest("ana-secret-key-000"), encoding="utf-8")
    config = load_service_config(path)
    assert config.projects["atlas"].workspace == tmp_path / "ws-atlas"
    assert config.projects["beta"].workspace == Path("/abs/ws-beta")
    assert config.keys[0].digest == key_digest("ana-secret-key-000")
    assert config.keys[1].digest == key_digest("plain-key-for-tests-only")
    assert config.keys[1].principal is not None and config.keys[1].principal.clearance == 1
    assert config.open_tenant is None  # keyless calls are refused unless asked for


@pytest.mark.parametrize(
    "text, expected",
    [
        ("projects: [1, 2", "not valid YAML at line"),
        ("- a\n- b\n", "expected a mapping"),
        ("projects: {}\nanonymous: true\n", "projects"),
        ("projects: {a: {workspace: w, tenant: t}}\n", "nobody could call"),
        ("projects: {a: {workspace: w, tenant: t}}\nkeys: [{key: short, tenant: t}]\n",
         "at least 16"),
        ("projects: {a: {workspace: w, tenant: t}}\nkeys: [{sha256: XYZ, tenant: t}]\n",
         "64 lower-case hex"),
        ("projects: {a: {workspace: w, tenant: t}}\nkeys: [{key: 0123456789abcdef, tenant: u}]\n",
         "owns no project"),
        ("projects: {a: {workspace: w, tenant: t}}\n"
         "keys: [{key: 0123456789abcdef, tenant: t}, {key: 0123456789abcdef, tenant: t}]\n",
         "same key"),
        ("projects: {a: {workspace: w, tenant: t}, b: {workspace: v, tenant: u}}\n"
         "anonymous: true\n", "anonymous_tenant"),
        ("projects: {a: {workspace: w, tenant: t, extra: 1}}\nanonymous: true\n", "extra"),
        ("projects: {a: {workspace: w, tenant: t}}\n"
         "keys: [{key: 0123456789abcdef, tenant: t, user: x, principal: {}}]\n", "not both"),
    ],
)  # fmt: skip
def test_a_bad_file_is_one_line_naming_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "service.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadRequestError) as e:
        load_service_config(path)
    message = str(e.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(BadRequestError, match="no such file"):
        load_service_config(tmp_path / "absent.yaml")


def test_one_workspace_is_served_to_anonymous_callers(tmp_path: Path) -> None:
    config = ServiceConfig.single(tmp_path)
    assert list(config.projects) == ["default"] and config.open_tenant == "default"
    assert config.keys == []
