"""``GET /metrics``: what the service did, in Prometheus' text format.

Request counts and latencies by route and status, each pipeline stage's latency (from the
traces the Python API returns), result-cache hits and misses, and degradations (a trace's
warnings: a store, model or LLM that was down and what was done instead). One registry per app,
so two apps in one process (tests) do not share counters.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import Response
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ServiceMetrics:
    """The service's counters and histograms."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "trilha_requests", "HTTP requests by route and status", ["route", "status"], registry=r
        )
        self.latency = Histogram(
            "trilha_request_seconds", "HTTP latency", ["route"], buckets=_BUCKETS, registry=r
        )
        self.stages = Histogram(
            "trilha_stage_seconds", "Stage latency", ["stage"], buckets=_BUCKETS, registry=r
        )
        self.cache = Counter(
            "trilha_cache_lookups", "Result-cache lookups by outcome", ["outcome"], registry=r
        )
        self.degradations = Counter(
            "trilha_degradations", "Warnings reported in traces, by route", ["route"], registry=r
        )

    def stage(self, name: str, latency_ms: float) -> None:
        """Record one stage's latency."""
        self.stages.labels(stage=name).observe(max(latency_ms, 0.0) / 1000)

    def trace(
        self, route: str, stages: Iterable[tuple[str, float]], cache_hit: bool | None,
        warnings: int,
    ) -> None:  # fmt: skip
        """Record what one request's trace says."""
        for name, ms in stages:
            self.stage(name, ms)
        if cache_hit is not None:
            self.cache.labels(outcome="hit" if cache_hit else "miss").inc()
        if warnings:
            self.degradations.labels(route=route).inc(warnings)

    def text(self) -> Response:
        """The exposition of every metric."""
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)
