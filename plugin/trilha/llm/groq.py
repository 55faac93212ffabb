"""Groq clients built from :class:`~trilha.settings.TrilhaSettings` (the ``llm`` extra).

Nothing here reaches the network: a client is only built, and only when a key is configured.
Clients retry nothing: their callers (the Pre-query step) have a fallback and a deadline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trilha.errors import requires_extra
from trilha.settings import TrilhaSettings

if TYPE_CHECKING:
    import groq


def _options(settings: TrilhaSettings) -> dict[str, Any]:
    return {
        "api_key": settings.groq_api_key,
        "base_url": settings.groq_base_url,
        "timeout": settings.llm_timeout_s,
        "max_retries": 0,
    }


#: What the ``llm`` extra's line names when groq is missing.
_GROQ = "the Groq LLM classifier"


def groq_client(settings: TrilhaSettings) -> groq.Groq | None:
    """A Groq client with the settings' key, base URL and timeout; None without a key."""
    if not settings.groq_api_key:
        return None
    with requires_extra("llm", _GROQ):
        from groq import Groq
    return Groq(**_options(settings))


def async_groq_client(settings: TrilhaSettings) -> groq.AsyncGroq | None:
    """The async twin of :func:`groq_client`."""
    if not settings.groq_api_key:
        return None
    with requires_extra("llm", _GROQ):
        from groq import AsyncGroq
    return AsyncGroq(**_options(settings))
