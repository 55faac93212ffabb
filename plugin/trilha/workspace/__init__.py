"""The workspace: one folder holding a unit store, a dense index, a lexical snapshot and a graph,
opened, searched, written and repaired as one.

:class:`~trilha.workspace.facade.Workspace` is the facade callers use. The parts are built by the
composition root (:mod:`~trilha.workspace.compose`, into :class:`~trilha.workspace.parts.Parts`);
writes (:mod:`~trilha.workspace.writes`), one-time upgrades (:mod:`~trilha.workspace.upgrade`),
consistency checks and repair (:mod:`~trilha.workspace.consistency`,
:mod:`~trilha.workspace.repair`) and the one-process lock (:mod:`~trilha.workspace.lock`) live
beside it.
"""

from trilha.workspace.facade import Workspace

__all__ = ["Workspace"]
