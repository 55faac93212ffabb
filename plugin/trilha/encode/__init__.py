"""Encoders: turn text into L2-normalised vectors."""

from trilha.encode.base import Embedder
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder, resolve_model_path

__all__ = ["Embedder", "SentenceTransformerEmbedder", "resolve_model_path"]
