"""A document's graph views as MCP resources, read as the caller sees them.

Two resource templates: ``trilha://doc/{doc_id}/subgraph.mmd`` (the Mermaid text of the
document's subgraph) and ``trilha://doc/{doc_id}/context.md`` (the context.md briefing centred
on it). The ``doc_id`` is percent-encoded as RFC 6570 expands it (``policy%2Flgpd``; a plain
``/`` is read too). A document the caller may not see reads exactly as one that does not exist.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from trilha.access.principal import Principal
from trilha.errors import ConfigurationError
from trilha.graph.export.mermaid import mermaid
from trilha.graph.service import GraphService
from trilha.server.projects import Project

TEMPLATES = [
    types.ResourceTemplate(
        name="subgraph.mmd",
        uri_template="trilha://doc/{doc_id}/subgraph.mmd",
        description="Mermaid 'graph LR' text of a document's subgraph (2 hops), as you see it.",
        mime_type="text/vnd.mermaid",
    ),
    types.ResourceTemplate(
        name="context.md",
        uri_template="trilha://doc/{doc_id}/context.md",
        description="A context.md briefing centred on a document: its subgraph, evidence paths "
        "and related documents, as you see them.",
        mime_type="text/markdown",
    ),
]
_URI = re.compile(r"^trilha://doc/(?P<doc>.+)/(?P<kind>subgraph\.mmd|context\.md)$")
_FORMS = " or ".join(t.uri_template for t in TEMPLATES)


def read(uri: str, project: Project, principal: Principal) -> types.ReadResourceResult:
    """The resource at ``uri`` as ``principal`` sees it (an MCP error when there is none)."""
    match = _URI.match(uri)
    if match is None:
        raise MCPError(types.INVALID_PARAMS, f"no resource {uri!r}; read {_FORMS}")
    doc_id, kind = unquote(match["doc"]), match["kind"]
    graph = _graph(project)
    found = graph.subgraph(doc_id, principal=principal)
    if not any(n.label == "Doc" for n in found.nodes):  # missing, or hidden from this caller
        raise MCPError(types.INVALID_PARAMS, f"no document {doc_id!r} here")
    if kind == "subgraph.mmd":
        text, mime = mermaid(found), "text/vnd.mermaid"
    else:
        text, mime = graph.context_md(doc_id, principal=principal), "text/markdown"
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
    )


def _graph(project: Project) -> GraphService:
    try:
        return project.workspace.require_graph()
    except ConfigurationError:
        raise MCPError(types.INVALID_PARAMS, "this project has no graph to read") from None
