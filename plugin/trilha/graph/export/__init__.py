"""Exports of graph results: mermaid and ``context.md`` text (seed 003 §4–5) and PNG drawings."""
