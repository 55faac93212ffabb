"""The indices: the unit store, the lexical (BM25) index and the dense (Qdrant) index."""
