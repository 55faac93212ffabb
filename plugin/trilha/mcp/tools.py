"""trilha's agent tools as MCP tools: the LlamaIndex tools themselves, served.

Each MCP tool *is* a LlamaIndex tool of :mod:`trilha.llamaindex` made for the caller's project
and principal: its MCP ``inputSchema`` and description are the tool's ``to_openai_tool()``
parameters and description, and a call runs the tool (its arguments validated by the same
:class:`~trilha.llamaindex.tool_args.ToolArgs` model). The result is the text the model reads
plus, when the tool returns a model or a mapping, that value as structured content (the
SearchResult's hits with their citations, the ContextBundle, the Answer, a graph read). A tool
refusing its arguments, or failing, is an MCP tool error (``isError``) of one line.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

import mcp_types as types
from llama_index.core.tools import FunctionTool
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from trilha.access.principal import Principal
from trilha.errors import BadRequestError, TrilhaError
from trilha.llamaindex.ask_tool import ask_tool
from trilha.llamaindex.context import CONTEXT_DESCRIPTION, ContextArgs, context_tool
from trilha.llamaindex.search_tool import search_tool
from trilha.llamaindex.tool_args import schema_tool
from trilha.llamaindex.tools import graph_tools
from trilha.server.projects import Project

log = logging.getLogger(__name__)

#: The conversation ``trilha_context`` calls over MCP belong to (the orchestrator's memory).
CONVERSATION = "mcp"
#: Why an anonymous caller gets no ``trilha_context`` (as ``POST /v1/context`` answers it).
NAMED_USERS_ONLY = (
    "trilha_context answers named users only; ask as one (trilha mcp --user USER over stdio, "
    "an API key naming a user over HTTP)"
)


def make_tools(project: Project, principal: Principal) -> list[FunctionTool]:
    """trilha_search, trilha_context, trilha_ask and (with a graph) the graph tools of
    ``project``, all answering as ``principal``."""
    ws = project.workspace
    made = [search_tool(ws, principal), _context(project, principal), ask_tool(ws, principal)]
    if ws.graph is not None:
        made += graph_tools(ws, principal)
    return made


def _context(project: Project, principal: Principal) -> FunctionTool:
    if principal.user_id is None:

        def refuse(_: ContextArgs) -> None:
            raise BadRequestError(NAMED_USERS_ONLY)

        return schema_tool("trilha_context", CONTEXT_DESCRIPTION, ContextArgs, refuse)
    return context_tool(
        project.orchestrator,
        user_id=principal.user_id,
        conversation_id=CONVERSATION,
        principal=principal,
    )


class Toolbox:
    """The tools each (project, principal) gets and their MCP listing, made on first use and
    kept (the ``size`` most recently used pairs); and each tool's input schema by name, which is
    the same for every caller."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._made: OrderedDict[tuple[str, str], dict[str, FunctionTool]] = OrderedDict()
        self._listed: dict[str, types.Tool] = {}

    def tools(self, project: Project, principal: Principal) -> dict[str, FunctionTool]:
        """The tools by name."""
        key = (project.project_id, principal.model_dump_json())
        found = self._made.get(key)
        if found is None:
            found = {t.metadata.get_name(): t for t in make_tools(project, principal)}
            self._made[key] = found
            while len(self._made) > self._size:
                self._made.popitem(last=False)
        self._made.move_to_end(key)
        return found

    def listing(self, project: Project, principal: Principal) -> list[types.Tool]:
        """The MCP listing of the tools (a tool's JSON schema is built once)."""
        tools = self.tools(project, principal)
        for name in tools.keys() - self._listed.keys():
            self._listed[name] = listed(tools[name])
        return [self._listed[name] for name in tools]

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """Tool ``name``'s input schema, once some caller's tools were listed (else None)."""
        found = self._listed.get(name)
        return None if found is None else found.input_schema


def listed(tool: FunctionTool) -> types.Tool:
    """The MCP listing of ``tool``: what ``to_openai_tool()`` tells a model, as it says it."""
    spec = tool.metadata.to_openai_tool()["function"]
    return types.Tool(
        name=spec["name"], description=spec["description"], input_schema=spec["parameters"]
    )


def error(line: str) -> types.CallToolResult:
    """A tool error the model reads: one line."""
    return types.CallToolResult(content=[types.TextContent(text=line)], is_error=True)


async def call(tools: dict[str, FunctionTool], name: str, arguments: Any) -> types.CallToolResult:
    """Run tool ``name`` with ``arguments``: its text and structured result, or a tool error."""
    tool = tools.get(name)
    if tool is None:
        return error(f"no tool {name!r}; the tools are: {', '.join(tools)}")
    try:
        out = await tool.acall(**(arguments or {}))
    except TrilhaError as e:
        return error(str(e))
    except Exception as e:  # a bug: the caller gets one line, the service's log the traceback
        log.exception("MCP tool %s failed", name)
        return error(f"{name} failed ({type(e).__name__}); the service's log says why")
    raw = out.raw_output
    structured = to_jsonable_python(raw) if isinstance(raw, BaseModel | dict) else None
    return types.CallToolResult(
        content=[types.TextContent(text=out.content)], structured_content=structured
    )
