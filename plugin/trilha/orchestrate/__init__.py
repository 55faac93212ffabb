"""The Retrieval Orchestrator (seed 004): RetrievalRequest → pre-query → profile and depth plan →
strategies → a budgeted, cited, permission-safe ContextBundle.

>>> orchestrator = Orchestrator(workspace)
>>> bundle = orchestrator.retrieve(RetrievalRequest(user_id="ana", conversation_id="c1",
...                                                 raw_query="Quais tarefas estão atrasadas?"))
"""

from trilha.config import OrchestratorConfig
from trilha.orchestrate.bundle import (
    ByMemoryClass,
    CdcMetadata,
    ClaimItem,
    ContextBundle,
    ContextItem,
    ItemCitation,
    Provenance,
)
from trilha.orchestrate.orchestrator import Orchestrator
from trilha.orchestrate.request import RetrievalRequest

__all__ = [
    "ByMemoryClass",
    "CdcMetadata",
    "ClaimItem",
    "ContextBundle",
    "ContextItem",
    "ItemCitation",
    "Orchestrator",
    "OrchestratorConfig",
    "Provenance",
    "RetrievalRequest",
]
