"""``trilha context``: the orchestrator's ContextBundle for one question of one user."""

from __future__ import annotations

import argparse
from typing import Any

from trilha.cli.options import add_workspace_options, open_workspace
from trilha.config import DEPTH_LEVELS, STRATEGIES
from trilha.errors import BadRequestError


def add_parser(sub: Any) -> None:
    """The ``context`` command and its options."""
    sp = sub.add_parser(
        "context", help="the orchestrator's context bundle for a question, as one user sees it"
    )
    add_workspace_options(sp)
    sp.add_argument("question", help="the question, as the user typed it")
    sp.add_argument("--user", required=True, help="who asks (a user of principals.yaml)")
    sp.add_argument("--conversation", default="cli", help="conversation id (default 'cli')")
    sp.add_argument(
        "--agent",
        default="knowledge",
        help="calling agent type, one of the workspace's agents "
        "(shipped: knowledge, task, user; default knowledge)",
    )
    sp.add_argument("--project", help="project the question is about")
    sp.add_argument("--depth", choices=DEPTH_LEVELS, help="D0–D4 (default: by the intent)")
    sp.add_argument("--strategy", choices=STRATEGIES, help="strategy (default: by the intent)")
    sp.add_argument("--max-tokens", type=int, help="token budget (default: the depth's)")
    sp.add_argument("--style", help="preferred answer style")
    sp.add_argument("--json", action="store_true", help="print the bundle as JSON")
    sp.set_defaults(func=cmd_context)


def cmd_context(args: argparse.Namespace) -> int:
    """Build and print the bundle (its job logged, and mirrored into the graph when there is
    one, before the workspace closes)."""
    from trilha.cli.render import render_bundle
    from trilha.orchestrate import Orchestrator, RetrievalRequest

    request = RetrievalRequest.make(
        user_id=args.user,
        conversation_id=args.conversation,
        raw_query=args.question,
        agent_type=args.agent,
        project_id=args.project,
        preferred_answer_style=args.style,
        depth=args.depth,
        strategy=args.strategy,
        max_tokens=args.max_tokens,
    )
    with open_workspace(args, search=True) as ws:
        orchestrator = Orchestrator(ws)
        try:
            agents = sorted(a.agent_type for a in orchestrator.config.agents.values())
            if args.agent not in agents:  # the workspace's agents (or the shipped ones)
                raise BadRequestError(
                    f"--agent {args.agent!r} is not an agent of this workspace; "
                    f"use one of {', '.join(agents)}"
                )
            bundle = orchestrator.retrieve(request)
        finally:
            orchestrator.close()  # the job's graph mirror lands before the graph closes
    print(bundle.model_dump_json(indent=2) if args.json else render_bundle(bundle))
    return 0
