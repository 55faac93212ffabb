"""trilha's agent tools over the Model Context Protocol (``trilha mcp``; the ``mcp`` extra).

The tools are the LlamaIndex tools of :mod:`trilha.llamaindex`, served with the schemas and
descriptions they advertise there (:mod:`trilha.mcp.tools`); a document's subgraph and
context.md are resources (:mod:`trilha.mcp.resources`). Over stdio one principal asks
(:func:`~trilha.mcp.server.fixed`); over streamable HTTP each request's API key names its caller
(:mod:`trilha.mcp.http`).
"""
