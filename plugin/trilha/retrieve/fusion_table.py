"""How a hybrid search fuses, per query language: the fusion tables and the one resolution order.

Every fusion value (merge, weights, RRF ``k``, side depths, signal, BM25's ``k1`` and ``b``) is
declared once, in :class:`~trilha.settings.Fusion` (re-exported here), with seed 001's
defaults. Each layer above it is a :class:`FusionLayer` per language (``default`` for every
language) that sets only what it names; :meth:`FusionTable.resolve` lays them in this order,
later winning:

1. the shipped ``profiles/fusion.yaml`` (its ``default`` entry, then the query language's);
2. the workspace's ``fusion.yaml``, written by ``trilha tune`` (same shape);
3. settings given explicitly (``TRILHA_MERGE``, ``TRILHA_WEIGHT_*``, ``TRILHA_RRF_K``,
   ``TRILHA_BM25_K1``, ``TRILHA_BM25_B`` for every language, then ``TRILHA_FUSION_BY_LANG``
   for one);
4. the request's own ``merge`` and ``weights``.

It tells, for each value in force, which layer set it (``trilha info`` prints that).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from trilha.config.loader import PROFILES_PACKAGE, yaml_problem
from trilha.errors import BadRequestError, one_line
from trilha.settings import (
    K1,
    Depth,
    Fusion,
    LengthNorm,
    Merge,
    RrfK,
    Share,
    Signal,
    TrilhaSettings,
    Weights,
)

__all__ = [
    "ANY_LANG",
    "SHIPPED_FILE",
    "TUNED_FILE",
    "Fusion",
    "FusionLayer",
    "FusionTable",
    "read_table",
    "write_table",
]

#: The workspace file ``trilha tune`` writes.
TUNED_FILE = "fusion.yaml"
#: The fusion table shipped in ``trilha.profiles``.
SHIPPED_FILE = "fusion.yaml"
#: The key of a table's entry for every language.
ANY_LANG = "default"
#: Where a value no layer sets comes from.
SEED = "seed 001 default"
_WEIGHTS = ("weight_bm25", "weight_semantic", "weight_kg")


class FusionLayer(BaseModel):
    """Some fusion values (None: this layer leaves it as the layers below set it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    merge: Merge | None = None
    weight_bm25: Share | None = None
    weight_semantic: Share | None = None
    weight_kg: Share | None = None
    rrf_k: RrfK | None = None
    depth_bm25: Depth | None = None
    depth_semantic: Depth | None = None
    signal: Signal | None = None
    bm25_k1: K1 | None = None
    bm25_b: LengthNorm | None = None

    def values(self) -> dict[str, Any]:
        """The values this layer sets."""
        return self.model_dump(exclude_none=True)


class FusionTable:
    """Layers of fusion values per language (``default`` for every language), resolved per
    query language with the name of the layer that set each value."""

    def __init__(self, layers: list[tuple[str, Mapping[str, FusionLayer]]]) -> None:
        self.layers = layers
        #: Languages some layer names (none: every query is fused as ``default``).
        self.named = sorted({k for _, t in layers for k in t if k != ANY_LANG})
        #: Fusions resolved so far per (language, request merge, request weights), so that a
        #: search resolves none (:func:`trilha.retrieve.plan.fusion_for`).
        self.chosen: dict[tuple[str, Merge | None, Weights | None], Fusion] = {}

    @classmethod
    def of(
        cls, settings: TrilhaSettings, workspace: Path, shipped: Path | None = None
    ) -> FusionTable:
        """The shipped profile's table (default: ``profiles/fusion.yaml``), the workspace's
        tuned one and the explicit settings."""
        shipped = shipped or Path(str(resources.files(PROFILES_PACKAGE) / SHIPPED_FILE))
        layers: list[tuple[str, Mapping[str, FusionLayer]]] = []
        if shipped.exists():
            layers.append((f"profile {shipped.name}", read_table(shipped)))
        tuned = workspace / TUNED_FILE
        if tuned.exists():
            layers.append((f"tuned {tuned}", read_table(tuned)))
        layers.append(("settings", {ANY_LANG: FusionLayer(**settings.fusion_values())}))
        by_lang = {
            lang: _layer(fields, "TRILHA_FUSION_BY_LANG", lang)
            for lang, fields in settings.fusion_by_lang.items()
        }
        layers.append(("settings (by language)", by_lang))
        return cls(layers)

    def resolve(
        self, lang: str, merge: Merge | None = None, weights: Weights | None = None
    ) -> tuple[Fusion, dict[str, str]]:
        """The fusion for a query in ``lang`` and, per value, the layer that set it.

        The one resolution order: :class:`Fusion`'s defaults, then the layers this table holds
        (shipped profile → ``trilha tune``'s file → settings → settings by language), each its
        ``default`` entry then ``lang``'s, then a request's own ``merge`` and ``weights``.
        """
        values: dict[str, Any] = {}
        origin = dict.fromkeys(Fusion.model_fields, SEED)
        for name, table in self.layers:
            for key in (ANY_LANG, lang):
                layer = table.get(key)
                if layer is None:
                    continue
                for field, value in layer.values().items():
                    values[field] = value
                    origin[field] = name if key == ANY_LANG else f"{name} [{key}]"
        try:
            fusion = Fusion(**values)
        except ValidationError as e:
            raise BadRequestError(f"fusion for {lang!r}: {one_line(e)}") from e
        asked = [*(["merge"] if merge else []), *(_WEIGHTS if weights is not None else [])]
        origin |= dict.fromkeys(asked, "request")
        return fusion.overridden(merge, weights), origin

    def languages(self) -> list[str]:
        """Languages some layer names."""
        return list(self.named)


def read_table(path: Path) -> dict[str, FusionLayer]:
    """A fusion table file: ``{default|<lang>: {merge, weight_*, rrf_k, depth_*}}``."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise BadRequestError(
            f"{path}: cannot read the fusion table ({yaml_problem(e)}); fix or remove it"
        ) from e
    except OSError as e:
        raise BadRequestError(f"{path}: cannot read the fusion table ({e.strerror})") from e
    if not isinstance(raw, dict):
        raise BadRequestError(f"{path}: a fusion table maps 'default' or a language to values")
    return {str(lang): _layer(fields, str(path), str(lang)) for lang, fields in raw.items()}


def _layer(fields: Any, where: str, lang: str) -> FusionLayer:
    try:
        return FusionLayer.model_validate(fields or {})
    except ValidationError as e:
        raise BadRequestError(f"{where}: entry {lang!r}: {one_line(e)}") from e


def write_table(path: Path, table: Mapping[str, FusionLayer], header: str) -> None:
    """Write a fusion table atomically, ``header`` as its leading comment."""
    body = {lang: layer.values() for lang, layer in table.items()}
    text = "".join(f"# {line}\n" for line in header.splitlines())
    text += yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
