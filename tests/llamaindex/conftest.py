"""An orchestrator over the sample organisation for the agent tests, with its own memory and
job log so that the agents' requests do not change what tests/orchestrate sees."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import ORG, ORG_NOW
from trilha.memory.jobs import JobLog
from trilha.memory.store import MemoryStore
from trilha.orchestrate import Orchestrator
from trilha.workspace import Workspace


@pytest.fixture(scope="session")
def agent_orch(
    org_ws: Workspace, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Orchestrator]:
    """The sample organisation's orchestrator, clock at :data:`ORG_NOW`, sample turns loaded."""
    folder = tmp_path_factory.mktemp("agent-memory")
    orch = Orchestrator(
        org_ws,
        memory=MemoryStore(folder / "memory.sqlite"),
        jobs=JobLog(folder / "memory.sqlite"),
        clock=lambda: ORG_NOW,
    )
    orch.memory.import_turns(ORG / "memory" / "turns.jsonl")
    yield orch
    orch.close()
