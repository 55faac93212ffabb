"""Helpers for tests, benchmarks and development, not used by the library itself: a local
ArcadeDB Bolt server that stands in for Neo4j."""
