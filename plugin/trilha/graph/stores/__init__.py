"""Graph stores: the :class:`~trilha.graph.stores.base.GraphStore` contract, the per-backend
Cypher dialect, and the backends (embedded or remote FalkorDB, Bolt for Neo4j/ArcadeDB, any
LlamaIndex ``PropertyGraphStore``). Each backend imports its driver only when used."""
