"""trilha's search stages as LlamaIndex instrumentation spans, so that tracing tools hooked on
LlamaIndex's root dispatcher see them, with their latencies, under the retriever or engine
that asked: ``trilha.search`` holding ``trilha.cache``, ``trilha.expansion``, ``trilha.bm25``,
``trilha.dense`` (the query's encoding included), ``trilha.kg``, ``trilha.fusion`` and
``trilha.rerank``. A span's id is ``trilha.<stage>-<uuid>`` (LlamaIndex's ``<name>-<uuid>``);
its tags carry ``trilha.stage``.

Spans go through ``get_dispatcher(__name__)`` of LlamaIndex's instrumentation
(``llama_index.core.instrumentation`` re-exports it), and only when a span handler other than
its null one listens: a process that never loaded LlamaIndex has none, so a stage then costs a
dictionary lookup and LlamaIndex is never imported for it.
"""

from __future__ import annotations

import contextvars
import inspect
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import Token
from typing import Any, TypeVar

T = TypeVar("T")

#: The package holding LlamaIndex's root dispatcher and its span context.
INSTRUMENTATION = "llama_index_instrumentation"


def _stage(stage: str) -> None:
    """The arguments a stage's span reports (its ``bound_args``)."""


_SIGNATURE = inspect.signature(_stage)


def listening() -> Any | None:
    """This module's dispatcher when a span handler listens to it (itself or up to the root),
    else None."""
    module = sys.modules.get(INSTRUMENTATION)
    # absent, or still being imported by another thread (a partly run module has no names yet)
    get_dispatcher = getattr(module, "get_dispatcher", None)
    null = getattr(module, "NullSpanHandler", None)
    if get_dispatcher is None or null is None or _initializing(module):
        return None
    dispatcher = get_dispatcher(__name__)
    level = dispatcher
    while level is not None:
        if any(not isinstance(h, null) for h in level.span_handlers):
            return dispatcher
        level = level.parent if level.propagate else None
    return None


def _initializing(module: Any) -> bool:
    """Whether ``module`` is still being imported (its code has not finished running)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


@contextmanager
def stage_span(stage: str) -> Iterator[None]:
    """The block as the span ``trilha.<stage>``, a child of the span active here (a dropped
    span when it raises)."""
    dispatcher = listening()
    if dispatcher is None:
        yield
        return
    from llama_index_instrumentation.dispatcher import active_instrument_tags
    from llama_index_instrumentation.span import active_span_id

    id_ = f"trilha.{stage}-{uuid.uuid4()}"
    bound = _SIGNATURE.bind(stage)
    token = active_span_id.set(id_)
    parent = None if token.old_value is Token.MISSING else token.old_value
    tags = {**active_instrument_tags.get(), "trilha.stage": stage}
    dispatcher.span_enter(id_=id_, bound_args=bound, parent_id=parent, tags=tags)
    try:
        yield
    except BaseException as e:
        dispatcher.span_drop(id_=id_, bound_args=bound, err=e)
        raise
    else:
        dispatcher.span_exit(id_=id_, bound_args=bound)
    finally:
        active_span_id.reset(token)


def spanned(stage: str, job: Callable[[], T]) -> Callable[[], T]:
    """``job`` run as the span ``trilha.<stage>``, a child of the span active where this is
    called, wherever the job then runs (a thread pool's thread)."""
    context = contextvars.copy_context()

    def run() -> T:
        with stage_span(stage):
            return job()

    return lambda: context.run(run)
