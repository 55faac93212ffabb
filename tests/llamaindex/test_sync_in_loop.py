"""The sync entry points called from inside a running event loop, as a notebook cell calls them
(issue 31, item 4): they answer as they do from plain synchronous code."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from llama_index.core.base.response.schema import Response

from tests.conftest import READER
from trilha.answer import ask
from trilha.llamaindex import TrilhaQueryEngine, TrilhaRetriever
from trilha.llamaindex.agent_router import AgentRouter
from trilha.llamaindex.agent_run import ask_agents
from trilha.orchestrate import Orchestrator
from trilha.sync_run import run_sync
from trilha.testing.scripted_llm import ScriptedLLM

US2 = "Quais tarefas da minha startup estão atrasadas?"
TRAVEL = "Qual é o prazo para pedir reembolso de despesas de viagem?"


async def test_sync_calls_work_inside_a_running_loop(agent_orch: Orchestrator) -> None:
    ws = agent_orch.workspace
    asyncio.get_running_loop()  # this test body runs on the loop, as a notebook cell does
    response = TrilhaQueryEngine(ws, principal=READER).query(TRAVEL)
    assert isinstance(response, Response) and response.metadata is not None
    assert response.metadata["no_answer"] is None and response.source_nodes
    answer = ask(ws, TRAVEL, principal=READER)
    assert answer.answered and answer.citations
    agents = ask_agents(
        agent_orch, ScriptedLLM(), US2, user_id="bruno.ti", conversation_id="c-loop"
    )
    assert agents.agent == "task_agent" and agents.bundles
    assert AgentRouter.of(agent_orch).decide(US2).agent.name == "task_agent"
    bundle = agent_orch.retrieve({"raw_query": US2, "user_id": "bruno.ti", "conversation_id": "c"})
    assert "Task:t-ropa" in {item.item_id for item in bundle.context_items}
    assert TrilhaRetriever(ws, principal=READER, top_k=2).retrieve(TRAVEL)
    await asyncio.sleep(0)  # the loop is still alive and usable


CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="none")


async def _where() -> tuple[str, str]:
    await asyncio.sleep(0)
    return CALLER.get(), threading.current_thread().name


async def _nested() -> tuple[str, str]:
    return run_sync(_where())  # sync code inside a coroutine run_sync is already running


def test_run_sync_without_a_loop_runs_here() -> None:
    CALLER.set("plain")
    assert run_sync(_where()) == ("plain", threading.current_thread().name)


async def test_run_sync_in_a_loop_keeps_the_context_and_nests() -> None:
    CALLER.set("cell")
    value, thread = run_sync(_where())
    assert value == "cell" and thread.startswith("trilha-sync")
    value, thread = run_sync(_nested())
    assert value == "cell" and thread.startswith("trilha-sync-nested")


def test_short_lived_threads_leave_no_loop_behind() -> None:
    """Each thread that calls run_sync gets a loop; a thread that is gone takes its loop (and
    the loop's descriptors) with it."""
    import gc
    import os
    import threading

    async def one() -> int:
        return 1

    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    def burst() -> None:
        threads = [threading.Thread(target=run_sync, args=(one(),)) for _ in range(30)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    burst()  # the first burst may open what stays open anyway (the selector's modules)
    gc.collect()
    before = fds()
    burst()
    gc.collect()
    assert fds() - before < 10  # 3 per thread (epoll and a socketpair) before the fix


async def test_a_forked_child_can_run_sync_inside_its_loop() -> None:
    """A child forked after the parent used the worker pool gets a pool of its own (the
    parent's, copied without its threads, never ran the child's call)."""
    import os
    import signal

    async def one() -> int:
        return 1

    assert run_sync(one()) == 1  # the parent's pool has a thread now
    pid = os.fork()
    if pid == 0:  # the child: a running loop calling sync code
        signal.alarm(10)

        async def child() -> int:
            return run_sync(one())

        import asyncio

        os._exit(0 if asyncio.run(child()) == 1 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_a_fork_from_another_thread_leaves_this_threads_loop_awake() -> None:
    """A subprocess started with a ``preexec_fn`` on another thread runs Python in a forked
    copy of this process; a GC there collects the old main thread, and closing its loop would
    remove the parent's epoll registrations (shared through the fork). Before the fix this
    thread's next call slept until a timer: a thread's result never woke its loop (the agent
    tests hung so in the full suite once the HNSW builder's child used a ``preexec_fn``)."""
    import gc
    import subprocess
    import sys
    import time

    assert run_sync(asyncio.sleep(0, 1)) == 1  # this thread's loop exists
    spawn = threading.Thread(
        target=subprocess.run,
        args=([sys.executable, "-c", "pass"],),
        kwargs={"preexec_fn": gc.collect, "check": True},
    )
    spawn.start()
    spawn.join()
    start = time.monotonic()
    result = run_sync(asyncio.wait_for(asyncio.to_thread(lambda: time.sleep(0.3) or 7), timeout=5))
    assert result == 7 and time.monotonic() - start < 2.5
