"""No MCP call shows a principal what it may not see: 1,000 calls (100 random principals, the
visibility tests' generator, 10 random tool calls or resource reads each) through the MCP server
with the SDK's in-process client, each checked against the visibility rule unit by unit
(``make check``; ``make test`` makes a quarter of them)."""

from __future__ import annotations

import json
import os
import random
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError

from tests.access.test_policy import access_of, principals
from tests.conftest import ORG
from trilha.access import Principal, visible
from trilha.access.directory import PRINCIPALS_FILE, load_principals
from trilha.mcp.server import build_server, fixed
from trilha.mcp.tools import NAMED_USERS_ONLY, Toolbox
from trilha.server import Projects
from trilha.server.projects import Caller, Project, Resolved

PRINCIPALS = int(os.environ.get("TRILHA_MCP_PRINCIPALS", "100"))
CALLS = 10
WORDS = "budget VPN incident prazo dados reembolso Atlas memo remote policy vendor nota LGPD"
WORDS = WORDS.split()
COUNTED = {"calls": 0}
#: The visibility tests' random principals, and the sample organisation's users (owners of
#: private notes among them).
WHO = st.one_of(
    principals, st.sampled_from(sorted(load_principals(ORG / PRINCIPALS_FILE).values(), key=str))
)


def _call(rng: random.Random, docs: list[str]) -> tuple[str, Any]:
    """A random tool call ``(name, arguments)``, or resource read ``(kind, doc_id)``; the graph
    reads are drawn more often than search, ask and context, which take 10–30 ms each here."""
    words = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
    doc = rng.choice([*docs, "nope/nothing"])
    [call] = rng.choices(
        [
            ("trilha_search", {"query": words, "top_k": rng.randint(1, 20)}),
            ("trilha_ask", {"question": words}),
            ("trilha_context", {"question": words}),
            ("trilha_graph_topn", {"entity_names": words.split(), "limit": rng.randint(1, 20)}),
            ("trilha_graph_subgraph", {"doc_id": doc}),
            ("trilha_graph_mermaid", {"doc_id": doc}),
            ("trilha_graph_path", {"source_entity": rng.choice(["LGPD", "ANPD", "Atlas"]),
                                   "target_entity": rng.choice(["VPN", "ANPD", "reembolso"])}),
            (rng.choice(["subgraph.mmd", "context.md"]), doc),
        ],
        weights=[1, 1, 1, 2, 2, 1, 1, 2],
    )  # fmt: skip
    return call


@pytest.fixture(scope="module")
def acme(mcp_projects: Projects) -> Project:
    return next(p for p in mcp_projects if p.project_id == "acme")


#: Principals per run: a quarter of the sweep in ``make test``, all of it in ``make check``.
SIZES = [PRINCIPALS // 4, pytest.param(PRINCIPALS, marks=pytest.mark.sweep)]


@pytest.mark.parametrize("n_principals", SIZES)
def test_no_call_shows_what_the_principal_may_not_see(acme: Project, n_principals: int) -> None:
    COUNTED["calls"] = 0
    units = list(acme.workspace.searcher.lexical.units)
    docs = sorted({u.doc_id for u in units})

    @settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
    @given(who=st.lists(WHO, min_size=n_principals, max_size=n_principals), seed=st.integers())
    def check(who: list[Principal], seed: int) -> None:
        rng = random.Random(seed)
        anyio.run(_run, acme, [(p, [_call(rng, docs) for _ in range(CALLS)]) for p in who])

    check()
    assert COUNTED["calls"] >= n_principals * CALLS


async def _run(acme: Project, plan: list[tuple[Principal, list[tuple[str, Any]]]]) -> None:
    box = Toolbox()
    units = list(acme.workspace.searcher.lexical.units)
    for principal, calls in plan:
        seen = {u.doc_id for u in units if visible(access_of(u), principal)}
        hidden = {u.doc_id for u in units} - seen
        server = build_server(fixed(Resolved(acme, principal, Caller("acme", None))), box)
        await _calls(server, calls, seen, hidden, principal.user_id is None)


async def _calls(
    server: Any, calls: list[tuple[str, Any]], seen: set[str], hidden: set[str], anonymous: bool
) -> None:
    async with Client(server) as client:
        for name, args in calls:
            COUNTED["calls"] += 1
            if isinstance(args, str):  # a resource of document ``args``
                uri = f"trilha://doc/{args.replace('/', '%2F')}/{name}"
                try:
                    shown = (await client.read_resource(uri)).contents[0].text
                except MCPError as e:
                    assert args not in seen, f"{args} is visible but reads as {e.message}"
                    continue
                assert args in seen, f"{name} of hidden {args} was read"
            else:
                result = await client.call_tool(name, args)
                if name == "trilha_context" and anonymous:
                    assert result.is_error and result.content[0].text == NAMED_USERS_ONLY
                    continue
                assert not result.is_error, result.content
                found = result.structured_content
                shown = result.content[0].text + json.dumps(found)
                if name == "trilha_graph_subgraph":  # it echoes the doc asked for (and notes
                    # 'not found' for a hidden doc as for a missing one): what it walked counts
                    assert args["doc_id"] in seen or not found["nodes"], f"{args} was walked"
                    shown = json.dumps([found["nodes"], found["edges"]])
            leaked = {d for d in hidden if d in shown}
            assert not leaked, f"{name}({args}) showed {leaked}"
