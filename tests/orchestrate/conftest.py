"""The orchestrator over the sample organisation (``org_ws``, from tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import ORG, ORG_NOW
from trilha.orchestrate import Orchestrator
from trilha.workspace import Workspace

#: The demo's "now": the sample tasks' due dates are read against it.
NOW = ORG_NOW


@pytest.fixture(scope="session")
def orchestrator(org_ws: Workspace) -> Orchestrator:
    """An orchestrator over the sample organisation, its clock fixed at :data:`NOW`, with the
    sample conversation turns in its memory."""
    orch = Orchestrator(org_ws, clock=lambda: NOW)
    orch.memory.import_turns(ORG / "memory" / "turns.jsonl")
    return orch
