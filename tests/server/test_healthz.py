"""``GET /healthz`` tells anyone whether the service is up, and only an operator key its own
tenant's projects: no other caller learns which projects a service holds, or their sizes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.server.conftest import KEYS, service_config
from trilha.access.principal import Principal
from trilha.server import Projects, ServiceConfig, create_app
from trilha.server.config import KeyEntry
from trilha.workspace import Workspace

GLOBEX_OPERATOR = "globex-operator-key-0123456789"


@pytest.fixture(scope="module")
def client(org_ws: Workspace, globex_ws: Workspace) -> Iterator[TestClient]:
    """acme and globex (keyless calls refused), with an operator key for each tenant."""
    base = service_config()
    operator = KeyEntry(
        key=GLOBEX_OPERATOR, tenant="globex", principal=Principal(user_id="ops"), operator=True
    )
    config = ServiceConfig(projects=base.projects, keys=[*base.keys, operator])
    projects = Projects.over(config, {"acme": org_ws, "globex": globex_ws})
    with TestClient(create_app(projects)) as c:
        yield c


def _health(client: TestClient, key: str | None) -> tuple[int, dict[str, object], str]:
    r = client.get("/healthz", headers={"X-API-Key": key} if key else {})
    return r.status_code, r.json(), r.text


@pytest.mark.parametrize("who", [None, "bruno", "gina"])
def test_anyone_else_reads_only_whether_the_service_is_up(client: TestClient, who: str) -> None:
    status, report, text = _health(client, KEYS[who] if who else None)
    assert (status, report) == (200, {"status": "ok"})
    assert "acme" not in text and "globex" not in text and "units" not in text


def test_an_operator_reads_its_own_tenants_projects_only(
    client: TestClient, org_ws: Workspace, globex_ws: Workspace
) -> None:
    status, report, text = _health(client, KEYS["maria"])  # acme's operator
    assert status == 200 and report["status"] == "ok"
    acme = report["projects"]
    assert isinstance(acme, dict) and set(acme) == {"acme"} and "globex" not in text
    assert acme["acme"]["units"] == len(org_ws.searcher.lexical.units)
    assert acme["acme"]["graph"].startswith("up") and acme["acme"]["cache"] in {"memory", "off"}
    status, report, text = _health(client, GLOBEX_OPERATOR)
    globex = report["projects"]
    assert isinstance(globex, dict) and set(globex) == {"globex"} and "acme" not in text
    assert globex["globex"]["units"] == len(globex_ws.searcher.lexical.units)
    assert globex["globex"]["graph"] == "off"


def test_an_unknown_key_is_refused(client: TestClient) -> None:
    status, report, _ = _health(client, "not-a-key-0123456789abcdef")
    assert status == 401 and report == {"detail": report["detail"]}
