"""Synchronous entry points over async logic, callable with or without a running event loop.

trilha writes its logic once, async; a sync method (``ask``, ``ask_agents``, a query engine's
``query``) runs that coroutine to completion with :func:`run_sync`:

- no loop running in this thread (a script, a CLI): on this thread's own loop, kept between
  calls (a new loop per call, as ``asyncio.run`` makes, with its worker threads started and
  joined each time, cost ~20 ms of an 84 ms answer on 2 cores);
- a loop running (a Jupyter cell, an async test, a server handler calling sync code): on a
  worker thread with its own loop, while the caller's thread waits, as LlamaIndex's own sync
  engines do in notebooks. No loop is patched
  (no ``nest_asyncio``); the caller's loop is blocked for the call, as any sync call blocks it,
  so code that lives on a loop should still ``await`` the async form.

Either way the coroutine sees the caller's context variables as they are at the call. A
thread's loop is closed when the thread is gone or the process exits; a forked child starts
with a pool of its own and never closes a loop it inherited: that loop's epoll is shared with the
parent, and a close in the child would remove the parent's registrations, leaving the parent's
loop asleep forever.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import weakref
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_LOCAL = threading.local()
#: Loops inherited through a fork, kept from collection (a collected loop closes itself).
_INHERITED: list[asyncio.Runner] = []
#: Threads that run coroutines for callers on a running loop (none start until used).
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="trilha-sync")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """The result of ``coro``, from synchronous code (see the module docstring)."""
    context = contextvars.copy_context()  # else a Runner keeps its first call's context
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _runner().run(coro, context=context)
    if getattr(_LOCAL, "worker", False):  # nested: a pool thread must not wait on the pool
        return _alone(coro, context)
    return _POOL.submit(_work, coro, context).result()


def _work(coro: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    _LOCAL.worker = True
    return _runner().run(coro, context=context)


def _alone(coro: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    """``coro`` on a thread and loop of its own (a call nested in a pool thread's loop)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="trilha-sync-nested") as one:
        return one.submit(context.run, asyncio.run, coro).result()


def _runner() -> asyncio.Runner:
    """This thread's event loop, made on first use and closed when the thread is gone (or the
    process exits), so short-lived threads leave no loop (and its descriptors) behind."""
    runner: asyncio.Runner | None = getattr(_LOCAL, "runner", None)
    if runner is None:
        runner = _LOCAL.runner = asyncio.Runner()
        weakref.finalize(threading.current_thread(), _close, runner, os.getpid())
    return runner


def _close(runner: asyncio.Runner, pid: int) -> None:
    """Close a gone thread's loop from whichever thread collects it (``Runner.close`` would run
    the loop, and reset the event loop of, that other thread), in the process that made it."""
    if os.getpid() != pid:  # a forked child collecting the parent's thread
        _INHERITED.append(runner)
        return
    loop = runner.get_loop()
    if not loop.is_running() and not loop.is_closed():
        loop.close()


def _new_pool() -> None:
    """A fresh pool in a forked child: the parent's threads do not exist there, and its pool
    would queue work that no thread ever runs."""
    global _POOL
    _POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="trilha-sync")
    runner = _LOCAL.__dict__.pop("runner", None)
    if runner is not None:
        _INHERITED.append(runner)
    _LOCAL.__dict__.clear()


os.register_at_fork(after_in_child=_new_pool)
