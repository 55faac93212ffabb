"""Entities from an LLM, through LlamaIndex's ``SchemaLLMPathExtractor`` (imported lazily).

Salience follows :func:`trilha.graph.build.extract.salience`, from how often and how early the
LLM's entity names occur in the unit's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from trilha.errors import MissingDependencyError
from trilha.graph.build.extract import ExtractedEntity, salience
from trilha.graph.model import normalise_name
from trilha.types import TextUnit


class LLMEntityExtractor:
    """Entities from an LLM through LlamaIndex's ``SchemaLLMPathExtractor`` (lazy import).

    Use it only when an LLM is configured; salience follows :func:`salience` using how often
    and how early the LLM's entity names occur in the text (1 occurrence at the end when absent).
    """

    def __init__(
        self,
        llm: Any,
        *,
        entity_types: Sequence[str] | None = None,
        relation_types: Sequence[str] | None = None,
        max_triplets_per_chunk: int = 10,
        num_workers: int = 1,
    ) -> None:
        try:
            from llama_index.core.indices.property_graph import SchemaLLMPathExtractor
        except ImportError as e:
            raise MissingDependencyError("llama-index-core", None, "LLM entity extraction") from e
        kwargs: dict[str, Any] = {}
        if entity_types:
            kwargs["possible_entities"] = Literal[tuple(entity_types)]
        if relation_types:
            kwargs["possible_relations"] = Literal[tuple(relation_types)]
        self._extractor = SchemaLLMPathExtractor(
            llm=llm,
            strict=False,
            max_triplets_per_chunk=max_triplets_per_chunk,
            num_workers=num_workers,
            **kwargs,
        )

    def extract(self, unit: TextUnit) -> list[ExtractedEntity]:
        """Entities of one unit (runs the extractor's own event loop: not inside a loop)."""
        return self.extract_many([unit])[unit.unit_id]

    def extract_many(self, units: Sequence[TextUnit]) -> dict[str, list[ExtractedEntity]]:
        """Entities per unit_id."""
        return self._collect(units, self._extractor(_nodes(units)))

    async def aextract_many(self, units: Sequence[TextUnit]) -> dict[str, list[ExtractedEntity]]:
        """Entities per unit_id, awaiting the extractor."""
        return self._collect(units, await self._extractor.acall(_nodes(units)))

    @staticmethod
    def _collect(
        units: Sequence[TextUnit], nodes: Sequence[Any]
    ) -> dict[str, list[ExtractedEntity]]:
        from llama_index.core.graph_stores.types import KG_NODES_KEY

        out: dict[str, list[ExtractedEntity]] = {}
        for unit, node in zip(units, nodes, strict=True):
            typed = {
                normalise_name(n.name): (n.name, n.label)
                for n in node.metadata.get(KG_NODES_KEY, [])
                if normalise_name(n.name)
            }
            out[unit.unit_id] = _score_names(unit.text, typed)
        return out


def _nodes(units: Sequence[TextUnit]) -> list[Any]:
    from llama_index.core.schema import TextNode

    return [TextNode(id_=u.unit_id, text=u.text) for u in units]


def _score_names(text: str, typed: Mapping[str, tuple[str, str]]) -> list[ExtractedEntity]:
    low = text.casefold()
    counts = {k: max(1, low.count(k)) for k in typed}
    top = max(counts.values(), default=1)
    out = [
        ExtractedEntity(
            name,
            type_,
            salience(counts[k], top, (low.find(k) if k in low else len(low)) / max(len(low), 1)),
            counts[k],
        )
        for k, (name, type_) in typed.items()
    ]
    return sorted(out, key=lambda e: (-e.salience, e.name))
