"""The memory service (seed 004 REQ-RETR-018): conversation turns and the retrieval job log.

:class:`MemoryStore` records turns per user, conversation and project and answers
:meth:`~MemoryStore.get_recent_context`; :class:`JobLog` keeps one :class:`RetrievalJob` per
request and its :class:`JobStats`. Both live in ``<workspace>/memory.sqlite`` by default and can
be mirrored into the graph (:class:`GraphMemoryMirror`, :class:`JobGraphWriter`).
"""

from trilha.memory.context import RecentContext
from trilha.memory.graph import GraphMemoryMirror, JobGraphWriter
from trilha.memory.jobs import JobLog, JobStats, RecurringPattern, RetrievalJob
from trilha.memory.store import MEMORY_FILE, MemoryStore, memory_at
from trilha.memory.turns import Turn

__all__ = [
    "MEMORY_FILE",
    "GraphMemoryMirror",
    "JobGraphWriter",
    "JobLog",
    "JobStats",
    "MemoryStore",
    "RecentContext",
    "RecurringPattern",
    "RetrievalJob",
    "Turn",
    "memory_at",
]
