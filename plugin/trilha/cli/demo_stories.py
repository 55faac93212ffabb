"""The demo's second part: seed 004's three user stories through the Retrieval Orchestrator.

The sample organisation's tasks, projects, OKRs and claims (``samples/graph/records.jsonl``) and
its conversation turns (``samples/memory/turns.jsonl``) are dated around :data:`DEMO_NOW`, so
the orchestrator's clock is fixed there: "late" and "this week" read the same on any day.
"""

from __future__ import annotations

from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

#: The day the sample organisation is read on.
DEMO_NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
#: (story, user, conversation, question, depth or None): seed 004's US1–US3.
STORIES = (
    ("US1, factual with citations and claims", "maria.cfo", "demo-us1",
     "Qual o prazo para comunicar um incidente com dados pessoais?", "D3"),
    ("US2, tasks from the graph", "bruno.ti", "demo-us2",
     "Quais tarefas da minha startup estão atrasadas?", None),
    ("US3, orientation from memory, priorities and strategy", "maria.cfo", "conv-maria-1",
     "O que deveríamos priorizar esta semana?", None),
)  # fmt: skip


def tell_stories(ws: Any, items: int = 6) -> None:
    """Load the sample conversation turns, then ask each story's question as its user."""
    from trilha.cli.render import render_bundle
    from trilha.orchestrate import Orchestrator, RetrievalRequest

    if ws.graph is None:
        print("Seed 004's user stories need the graph (graph_backend is 'none'); skipped.")
        return
    orchestrator = Orchestrator(ws, clock=lambda: DEMO_NOW)
    orchestrator.memory.import_turns(Path(str(files("trilha.samples") / "memory" / "turns.jsonl")))
    print(f"Seed 004's user stories, through the orchestrator (as of {DEMO_NOW:%Y-%m-%d}):")
    try:
        for story, user, conversation, question, depth in STORIES:
            request = RetrievalRequest(
                user_id=user, conversation_id=conversation, raw_query=question, depth=depth
            )
            bundle = orchestrator.retrieve(request)
            print(f"\n{story}\nQ ({user}): {question}")
            print(render_bundle(bundle, limit=items))
    finally:
        orchestrator.close()  # the jobs' graph mirrors land before the workspace closes
