"""How a hybrid search fuses, per query language: the weights, the merge, RRF's ``k``, the depths.

A search's fusion is built in layers, each setting only what it names:

1. seed 001's defaults (weighted merge, bm25 0.5 / semantic 0.4 / kg 0.1, RRF k 60, each side
   fetching 3·top_k);
2. the shipped ``profiles/fusion.yaml`` (its ``default`` entry, then the query language's);
3. the workspace's ``fusion.yaml``, written by ``trilha tune`` (same shape);
4. settings given explicitly (``TRILHA_WEIGHT_BM25`` … for every language, then
   ``TRILHA_FUSION_BY_LANG`` for one);
5. the request's own ``merge`` and ``weights``.

:class:`FusionTable` holds layers 2–4 and tells, for each value in force, which layer set it
(``trilha info`` prints that).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trilha.config.loader import PROFILES_PACKAGE, yaml_problem
from trilha.errors import BadRequestError, one_line
from trilha.index.language import query_language
from trilha.retrieve.fusion import Weights
from trilha.settings import TrilhaSettings

#: The workspace file ``trilha tune`` writes.
TUNED_FILE = "fusion.yaml"
#: The fusion table shipped in ``trilha.profiles``.
SHIPPED_FILE = "fusion.yaml"
#: The key of a table's entry for every language.
ANY_LANG = "default"


#: Fusion values that are also settings (``TRILHA_<NAME>``), under the same name.
FROM_SETTINGS = ("merge", "weight_bm25", "weight_semantic", "weight_kg", "rrf_k")


class Fusion(BaseModel):
    """Every fusion value of one search, resolved."""

    model_config = ConfigDict(frozen=True)

    merge: Literal["weighted", "rrf"] = Field("weighted", description="Merge strategy.")
    weight_bm25: float = Field(0.5, ge=0, description="Share of the min-max-scaled BM25 score.")
    weight_semantic: float = Field(0.4, ge=0, description="Share of the min-max-scaled cosine.")
    weight_kg: float = Field(0.1, ge=0, description="Share of the knowledge-graph boost.")
    rrf_k: int = Field(60, gt=0, description="RRF constant (1-based ranks).")
    depth_bm25: int = Field(3, ge=1, le=100, description="BM25 fetches depth·top_k (capped).")
    depth_semantic: int = Field(3, ge=1, le=100, description="Dense fetches depth·top_k (capped).")
    signal: Literal["none", "peak"] = Field(
        "none", description="'peak': weighted shares scaled per query by each side's peakedness."
    )

    @classmethod
    def of_settings(cls, s: TrilhaSettings) -> Fusion:
        """The settings' own values (``TRILHA_MERGE``, ``TRILHA_WEIGHT_*``, ``TRILHA_RRF_K``)."""
        return cls(**{name: getattr(s, name) for name in FROM_SETTINGS})

    @property
    def weights(self) -> Weights:
        """The weighted merge's shares."""
        return Weights(bm25=self.weight_bm25, semantic=self.weight_semantic, kg=self.weight_kg)


class FusionLayer(BaseModel):
    """Some fusion values (None: this layer leaves it as the layers below set it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    merge: Literal["weighted", "rrf"] | None = None
    weight_bm25: float | None = Field(None, ge=0)
    weight_semantic: float | None = Field(None, ge=0)
    weight_kg: float | None = Field(None, ge=0)
    rrf_k: int | None = Field(None, gt=0)
    depth_bm25: int | None = Field(None, ge=1, le=100)
    depth_semantic: int | None = Field(None, ge=1, le=100)
    signal: Literal["none", "peak"] | None = None

    def values(self) -> dict[str, Any]:
        """The values this layer sets."""
        return self.model_dump(exclude_none=True)


def explicit_settings(settings: TrilhaSettings) -> FusionLayer:
    """The fusion values set explicitly (environment or keyword), not left at their default."""
    given = settings.model_fields_set
    return FusionLayer(**{k: getattr(settings, k) for k in FROM_SETTINGS if k in given})


class FusionTable:
    """Layers of fusion values per language (``default`` for every language), resolved per
    query language with the name of the layer that set each value."""

    def __init__(self, layers: list[tuple[str, Mapping[str, FusionLayer]]]) -> None:
        self.layers = layers
        self._languages = sorted({k for _, t in layers for k in t if k != ANY_LANG})
        self._resolved: dict[str, Fusion] = {}

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
        layers.append(("settings", {ANY_LANG: explicit_settings(settings)}))
        by_lang = {
            lang: _layer(fields, "TRILHA_FUSION_BY_LANG", lang)
            for lang, fields in settings.fusion_by_lang.items()
        }
        layers.append(("settings (by language)", by_lang))
        return cls(layers)

    def resolve(self, lang: str) -> tuple[Fusion, dict[str, str]]:
        """The fusion for a query in ``lang`` and, per value, the layer that set it."""
        values: dict[str, Any] = {}
        origin = dict.fromkeys(Fusion.model_fields, "seed 001 default")
        for name, table in self.layers:
            for key in (ANY_LANG, lang):
                layer = table.get(key)
                if layer is None:
                    continue
                for field, value in layer.values().items():
                    values[field] = value
                    origin[field] = name if key == ANY_LANG else f"{name} [{key}]"
        return Fusion(**values), origin

    def for_query(self, text: str, langs: Sequence[str]) -> tuple[str | None, Fusion]:
        """The language a query is searched in (:func:`~trilha.index.language.query_language`
        among an index's ``langs``) and its fusion; (None, the fusion of every language) when no
        layer names a language, so that no query is run through the detector for nothing."""
        lang = query_language(text, langs) if self._languages else None
        key = lang or ANY_LANG
        fusion = self._resolved.get(key)
        if fusion is None:
            fusion = self._resolved[key] = self.resolve(key)[0]
        return lang, fusion

    def languages(self) -> list[str]:
        """Languages some layer names."""
        return list(self._languages)


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
