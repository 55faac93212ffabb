"""Reading a workspace's units: by id, by document, all of them, their vectors, how many match."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from trilha.index.filters import FilterExpr
from trilha.types import TextUnit
from trilha.workspace.parts import Parts

Vector = npt.NDArray[np.float32]


class UnitReads:
    """The unit-reading half of :class:`~trilha.workspace.facade.Workspace`."""

    _parts: Parts

    def __len__(self) -> int:
        return len(self._parts.searcher.lexical)

    def units(self, unit_ids: Sequence[str]) -> dict[str, TextUnit]:
        """Units by id."""
        return self._parts.store.get(unit_ids)

    def all_units(self) -> Sequence[TextUnit]:
        """Every unit of the current generation, in store order (the searcher's snapshot)."""
        return self._parts.searcher.lexical.units

    def doc_units(self, doc_id: str) -> list[TextUnit]:
        """The units of one document, in document order (none when it is not held)."""
        return self._parts.store.units_of([doc_id])

    def has_doc(self, doc_id: str) -> bool:
        """Whether the workspace holds document ``doc_id``."""
        return self._parts.store.doc_hash(doc_id) is not None

    def vectors(self, unit_ids: Sequence[str]) -> dict[str, Vector]:
        """The stored embeddings of these units (ids without one are left out)."""
        return self._parts.dense.vectors(list(unit_ids))

    def count_matching(self, filters: FilterExpr | None) -> int:
        """How many units of the current generation ``filters`` lets through."""
        mask = None if filters is None else self._parts.searcher.lexical.columns.mask(filters)
        return len(self) if mask is None else int(np.count_nonzero(mask))
