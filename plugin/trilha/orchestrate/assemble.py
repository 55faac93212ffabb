"""From the items every source found to the ContextBundle: budget, groups, summary, instructions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from trilha.access import scope_key
from trilha.orchestrate.budget import Fitted, fit
from trilha.orchestrate.bundle import (
    BundleTrace,
    ByMemoryClass,
    CdcMetadata,
    ClaimItem,
    ContextBundle,
    Limits,
)
from trilha.orchestrate.sources import Ask, Found
from trilha.types import StepTrace


def assemble(
    ask: Ask, founds: Sequence[Found], *, job_id: str, steps: list[StepTrace], latency_ms: float
) -> ContextBundle:
    """The bundle of ``founds`` for ``ask``, within its token budget and ``max_results``."""
    settings = ask.config.orchestrator
    fitted = fit(
        [item for found in founds for item in found.items],
        max_tokens=ask.plan.max_tokens,
        max_results=ask.config.max_results,
        priority=settings.class_priority,
        min_item_tokens=settings.min_item_tokens,
    )
    return ContextBundle(
        context_items=fitted.items,
        retrieval_summary=summary(fitted, ask.plan.max_tokens),
        strategies_used=[ask.plan.strategy, *(f.step for f in founds)],
        depth_used=ask.plan.depth_number,
        tokens_estimated=fitted.tokens,
        by_memory_class=by_class(fitted),
        cdc_metadata=CdcMetadata(
            depth_level=ask.plan.depth,
            query_profile_used=ask.plan.profile.name if ask.plan.profile else None,
            filters_applied=filters_applied(ask, founds),
        ),
        llm_instructions=instructions(ask),
        trace=_trace(ask, founds, fitted, job_id, steps, latency_ms),
    )


def _trace(
    ask: Ask,
    founds: Sequence[Found],
    fitted: Fitted,
    job_id: str,
    steps: list[StepTrace],
    latency_ms: float,
) -> BundleTrace:
    ran = [
        StepTrace(name=f.step, latency_ms=round(f.latency_ms, 3), count=len(f.items), note=f.detail)
        for f in founds
    ]
    return BundleTrace(
        job_id=job_id,
        principal=scope_key(ask.principal),
        prequery=ask.pre,
        stages=steps + ran,
        warnings=[*ask.warnings, *(flat(f.warning) for f in founds if f.warning)],
        limits=Limits(
            max_nodes_scanned=ask.config.max_nodes_scanned,
            max_results=ask.config.max_results,
            max_depth=ask.config.max_depth,
            max_tokens_context=ask.plan.max_tokens,
            nodes_scanned=sum(f.scanned for f in founds),
            results=len(fitted.items),
            dropped=fitted.dropped,
            truncated=fitted.truncated,
        ),
        latency_ms=round(latency_ms, 3),
    )


def flat(warning: str) -> str:
    """``warning`` on one line (a backend's message may span several)."""
    return " ".join(warning.split())


def by_class(fitted: Fitted) -> ByMemoryClass:
    """The kept items grouped by memory class, in bundle order."""
    groups = ByMemoryClass()
    for item in fitted.items:
        if isinstance(item, ClaimItem):
            groups.claims.append(item)
        elif item.memory_class != "claims":
            getattr(groups, item.memory_class).append(item)
    return groups


def summary(fitted: Fitted, budget: int) -> str:
    """What was found, by kind, and what the budget cost."""
    kinds = Counter(_kind(item.item_type) for item in fitted.items)
    found = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common()) or "nothing visible"
    text = f"Found {found} ({fitted.tokens} of {budget} tokens)."
    if fitted.dropped or fitted.truncated:
        text += (
            f" {fitted.dropped} item(s) left out and {fitted.truncated} cut to fit the budget"
            " or max_results."
        )
    return text


def _kind(item_type: str) -> str:
    names = {"chunk": "document passages", "turn": "conversation turns", "job": "past retrievals"}
    return names.get(item_type, f"{item_type} nodes")


def filters_applied(ask: Ask, founds: Sequence[Found]) -> list[str]:
    """The filters every read applied: visibility always, then each source's own."""
    applied = [f"visibility:{scope_key(ask.principal)}"]
    if ask.request.project_id:
        applied.append(f"project:{ask.request.project_id}")
    for found in founds:
        applied += [f for f in found.filters if f not in applied]
    return applied


def instructions(ask: Ask) -> list[str]:
    """The configured instructions for the caller's LLM, filled in for this request."""
    spec = ask.config.orchestrator.instructions
    constraints = ask.pre.answer_constraints
    style = ask.request.preferred_answer_style or _agent_style(ask)
    lines = [line.format(style=style, budget=ask.plan.max_tokens) for line in spec.always]
    lines.append(spec.length[constraints.length])
    if constraints.language in spec.language:
        lines.append(spec.language[constraints.language])
    return lines


def _agent_style(ask: Ask) -> str:
    return ask.agent_style or "clear and cited"
