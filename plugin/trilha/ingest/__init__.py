"""Ingestion: load documents, cut them into TextUnits, and index them idempotently."""

from trilha.ingest.chunking import chunk_document, index_text
from trilha.ingest.loaders import SourceDocument, load_path

__all__ = ["SourceDocument", "chunk_document", "index_text", "load_path"]
