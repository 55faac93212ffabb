"""Writing the graph: explicit records, the rows built from units and records, entity
extraction, and the writer that sends them (upserts, replacement, deletion)."""
