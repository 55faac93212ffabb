"""Stage 2, query expansion (seed 001, F7): up to three variants of a query, each searched, the
results merged by ``unit_id`` (:func:`merge_variants`).

* :class:`OfflineExpander` — groups of equivalent terms per language (``profiles/expansions.yaml``:
  legal synonyms, procedural and statute abbreviations, corporate vocabulary); no model, no
  network, a few microseconds.
* :class:`LLMQueryExpander` — a Groq chat model (or a LlamaIndex LLM) asked with seed 001's
  legal rules (synonyms, procedural equivalents, statute reformulations); past its timeout
  (3 s) or on any failure it gives no variant and says why, and the search goes on with the
  query alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, Protocol

import yaml

from trilha.errors import ConfigurationError
from trilha.index.tokenize import fold_accents
from trilha.settings import TrilhaSettings
from trilha.types import Hit, SearchResult, StageTrace


@dataclass(frozen=True)
class Expansion:
    """The variants of one query, and why there are none when expansion failed."""

    variants: list[str]
    warning: str | None = None


class Expander(Protocol):
    """Gives the variants of a query in a language."""

    def expand(self, query: str, lang: str | None) -> Expansion: ...


def _fold(text: str) -> str:
    """Lower case without accents (what offline matching compares)."""
    return fold_accents(text.casefold())


class OfflineExpander:
    """Variants from groups of equivalent terms (see the module docstring)."""

    def __init__(
        self, groups: dict[str, list[list[str]]], exact: Sequence[str] = (), limit: int = 3
    ) -> None:
        exact_terms = set(exact)
        #: Per language, each group's terms with their pattern, and whether the pattern is
        #: matched on the query as written (``exact``) or on its folded form.
        self._groups = {
            lang: [[(t, _pattern(t, t in exact_terms), t in exact_terms) for t in g] for g in gs]
            for lang, gs in groups.items()
        }
        self.limit = limit

    @classmethod
    def load(cls, path: Path | None = None, limit: int = 3) -> OfflineExpander:
        """The table at ``path`` (default: the packaged ``profiles/expansions.yaml``)."""
        source = files("trilha.profiles") / "expansions.yaml" if path is None else path
        try:
            data = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
            exact = [str(t) for t in data.pop("exact", [])]
            groups = {str(k): [[str(t) for t in g] for g in v] for k, v in data.items()}
        except (OSError, yaml.YAMLError, AttributeError, TypeError) as e:
            raise ConfigurationError(
                f"{path or 'expansions.yaml'}: not a table of term groups per language ({e})"
            ) from e
        return cls(groups, exact, limit)

    def expand(self, query: str, lang: str | None) -> Expansion:
        """Up to :attr:`limit` variants: each other term of a group in a matched term's place."""
        folded, variants = _fold(query), []
        # folded offsets are the query's only when folding kept the length (accents and case)
        same_length = len(folded) == len(query)
        for group in [*self._groups.get((lang or "")[:2], []), *self._groups.get("any", [])]:
            for term, pattern, exact in group:
                found = pattern.search(query if exact else folded)
                if found is None or not (exact or same_length):
                    continue
                start, end = found.span()
                for other, _, _ in group:
                    variant = query[:start] + other + query[end:]
                    if other != term and variant not in variants:
                        variants.append(variant)
                break
        return Expansion(variants[: self.limit])


def _pattern(term: str, exact: bool) -> re.Pattern[str]:
    """``term`` as a whole word: as written when ``exact``, else folded (see :func:`_fold`)."""
    return re.compile(rf"(?<!\w){re.escape(term if exact else _fold(term))}(?!\w)")


#: Seed 001's expansion rules, as the model is asked.
PROMPT = (
    "You rewrite search queries for a Brazilian legal and corporate document search. Give at "
    "most {limit} alternative phrasings of the user's query, in the query's language, each "
    "keeping its meaning: (1) legal synonyms (e.g. 'dano moral' -> 'dano extrapatrimonial'); "
    "(2) procedural equivalents (e.g. 'recurso especial' -> 'REsp'); (3) thesis or statute "
    "reformulations (e.g. 'prazo prescricional' -> 'prescrição quinquenal art. 206 CC'). Answer "
    'with JSON only: {{"variants": ["...", "..."]}}; an empty list when nothing applies.'
)


class LLMQueryExpander:
    """Variants from a chat model (a ``groq.Groq`` client, or a LlamaIndex LLM's
    :class:`~trilha.llm.llamaindex.LlamaIndexChatClient`), ``timeout_s`` per call."""

    def __init__(self, client: Any, model: str, timeout_s: float = 3.0, limit: int = 3) -> None:
        self.client = client.with_options(timeout=timeout_s, max_retries=0)
        self.model = model
        self.timeout_s = timeout_s
        self.limit = limit

    def expand(self, query: str, lang: str | None) -> Expansion:
        """The model's variants; none, with a warning, on a timeout, an error or a bad answer."""
        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": PROMPT.format(limit=self.limit)},
                    {"role": "user", "content": query},
                ],
                response_format={"type": "json_object"},
                temperature=0,
            )
            answer = json.loads(completion.choices[0].message.content or "{}")
            found = answer.get("variants") if isinstance(answer, dict) else None
            if not isinstance(found, list):
                raise ValueError('no "variants" list in the answer')
        except Exception as e:  # the client's timeouts, HTTP errors, and bad JSON alike
            reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip()
            return Expansion(
                [], f"query expansion failed ({self.model}, {reason}); searched the query alone"
            )
        texts = [" ".join(str(v).split()) for v in found if isinstance(v, str)]
        unique = [t for t in dict.fromkeys(texts) if t and t != query.strip()]
        return Expansion(unique[: self.limit])


def merge_variants(results: Sequence[SearchResult], top_k: int) -> SearchResult:
    """The first result (the query's own) with the others' hits merged in by ``unit_id``: a
    unit keeps its best score over every variant; ``top_k`` best kept."""
    best: dict[str, Hit] = {}
    for result in results:
        for hit in result.hits:
            kept = best.get(hit.unit.unit_id)
            if kept is None or hit.score > kept.score:
                best[hit.unit.unit_id] = hit
    ordered = sorted(best.values(), key=lambda h: (-h.score, h.unit.unit_id))[:top_k]
    ranked = [
        Hit(unit=h.unit, scores=h.scores.model_copy(update={"fused_rank": n}))
        for n, h in enumerate(ordered, start=1)
    ]
    first = results[0].trace
    warnings = list(first.warnings)
    for result in results[1:]:
        warnings += [w for w in result.trace.warnings if w not in warnings]
    trace = first.model_copy(
        update={
            "bm25_hits": sum(r.trace.bm25_hits for r in results),
            "ann_hits": sum(r.trace.ann_hits for r in results),
            "warnings": warnings,
        }
    )
    return SearchResult(hits=ranked, trace=trace)


def expanded(
    results: Sequence[SearchResult], expansion: Expansion, top_k: int, ms: float
) -> SearchResult:
    """:func:`merge_variants` with the expansion recorded in the trace (variants, any warning,
    and an ``expand`` stage with the time the variants took to make); ``results`` are not
    changed."""
    merged = merge_variants(results, top_k)
    stage = StageTrace(
        name="expand", latency_ms=ms, count=len(expansion.variants), note=expansion.warning
    )
    warnings = merged.trace.warnings
    trace = merged.trace.model_copy(
        update={
            "expansion_queries": list(expansion.variants),
            "stages": [stage, *merged.trace.stages],
            "warnings": [*warnings, expansion.warning] if expansion.warning else warnings,
        }
    )
    return SearchResult(hits=merged.hits, trace=trace)


def make_expander(settings: TrilhaSettings, llm: Any | None = None) -> Expander:
    """The configured expander (``TRILHA_EXPANSION_BACKEND``; see the module docstring). Unless
    it is ``offline``, a Groq key in the settings wins; without one, the LlamaIndex LLM ``llm``
    (else ``Settings.llm`` when set, :mod:`trilha.llm.llamaindex`) makes the variants."""
    from trilha.llm.groq import groq_client
    from trilha.llm.llamaindex import chat_client

    limit, timeout = settings.expansion_max_variants, settings.expansion_timeout_s
    if settings.expansion_backend != "offline":
        client = groq_client(settings)
        if client is not None:
            return LLMQueryExpander(client, settings.groq_model, timeout, limit)
        chat = chat_client(llm)
        if chat is not None:
            return LLMQueryExpander(chat, chat.model, timeout, limit)
        if settings.expansion_backend == "llm":
            raise ConfigurationError(
                "TRILHA_EXPANSION_BACKEND=llm needs TRILHA_GROQ_API_KEY (or a LlamaIndex "
                "Settings.llm); set one, or use offline"
            )
    return OfflineExpander.load(limit=limit)
