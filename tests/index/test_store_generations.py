"""The unit store's generation counters, read together as a read-only follower polls them."""

from __future__ import annotations

from pathlib import Path

from trilha.index.docstore import DocStore
from trilha.types import TextUnit


def test_generations_are_read_in_one_go(tmp_path: Path) -> None:
    store = DocStore(tmp_path / "units.sqlite")
    try:
        assert store.generations() == (0, 0)
        store.bump_graph()
        store.bump_graph()
        unit = TextUnit(unit_id="d#0", doc_id="d", text="a unit")
        store.replace_doc("d", "hash", None, [unit], [["unit"]])  # stored data changed
        assert store.generations() == (store.generation, store.graph_generation)
        assert store.generation > 0 and store.graph_generation == 2
    finally:
        store.close()
