"""Query Profiles, depth plans and RetrievalConfig shipped as data (YAML)."""
