"""LlamaIndex Documents and nodes -> trilha's source documents, before ingest.

The id rule (stable, so that loading a folder again and refreshing is a no-op):

* a ``Document`` is the document its LlamaIndex ``doc_id`` names when the caller set one;
  when it carries the random UUID LlamaIndex makes up, the ``file_path`` its reader set names
  it (several Documents of one file, a PDF's pages, become one document, pages marked);
  a Document with neither keeps its random id;
* a node that arrived chunked (a node parser, ``IngestionPipeline(...).run()``) is one unit
  under its own id, in its source document (``ref_doc_id``) named by the same rule: the id the
  caller set, else the ``file_path``, else the random id; a node without a source is a document
  of its own. Nodes are not chunked again; running the pipeline again replaces a document's
  units.

A Markdown file's front matter (readers keep it in the text) is read as trilha's loader reads
it, and its fields join the reader's metadata.

Metadata: trilha's fields (``tags``, ``lang``, ``visibility``, ``sensitivity``, dates...) are
read from it with the checks front matter gets (:func:`trilha.ingest.chunking.chunk_document`);
every other key is kept, filterable; ``last_accessed_date`` (readers set it on every read) and
None values are dropped.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from llama_index.core.schema import BaseNode, Document, MetadataMode

from trilha.errors import BadRequestError
from trilha.ingest.loaders import Loaded, Piece, Refusal, SourceDocument, split_front_matter

#: Reader metadata that changes on every read: kept out, or every refresh would rewrite.
VOLATILE_KEYS = frozenset({"last_accessed_date"})
#: File suffixes read as Markdown.
_MARKDOWN = (".md", ".markdown")


def _random(node_id: str | None) -> bool:
    """Whether ``node_id`` is a random UUID (what LlamaIndex gives a node nobody named)."""
    try:
        return node_id is not None and uuid.UUID(node_id).version == 4
    except ValueError:
        return False


def document_id(doc: Document) -> str:
    """The stable id of a Document (see the module's rule)."""
    path = doc.metadata.get("file_path")
    return str(path) if _random(doc.id_) and path else doc.id_


def node_document_id(node: BaseNode) -> str:
    """The id of the document a chunked node belongs to (see the module's rule)."""
    path = node.metadata.get("file_path")
    source = node.ref_doc_id
    if path and (source is None or _random(source)):
        return str(path)
    return source or node.node_id


def _meta(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k not in VOLATILE_KEYS and v is not None}


def _kind(metadata: dict[str, Any]) -> str:
    name = str(metadata.get("file_path") or metadata.get("file_name") or "")
    return "markdown" if name.lower().endswith(_MARKDOWN) else "text"


def _page_text(docs: list[Document]) -> str:
    """The texts of one file's Documents, each after a page mark when it has a page number."""
    if len(docs) == 1:
        return docs[0].text
    marks = [str(d.metadata.get("page_label", "")) for d in docs]
    return "\n\n".join(
        f"<!-- page: {m} -->\n{d.text}" if m.isdigit() else d.text
        for m, d in zip(marks, docs, strict=True)
    )


def _from_documents(doc_id: str, docs: list[Document]) -> Loaded:
    meta = _meta(docs[0].metadata)
    meta.pop("page_label", None)
    meta.setdefault("source_ref", meta.get("file_path"))
    text, kind = _page_text(docs), _kind(meta)
    if kind == "markdown":
        try:
            front, text = split_front_matter(text, doc_id)
        except BadRequestError as e:
            return Refusal(doc_id, str(e).removeprefix(f"{doc_id}: "))
        meta.update(front)
    return SourceDocument(doc_id=doc_id, text=text, source_type=kind, meta=_meta(meta))


def _from_nodes(doc_id: str, nodes: list[BaseNode]) -> SourceDocument:
    texts = [n.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
    pieces = [
        Piece(unit_id=n.node_id, text=t, meta=_meta(n.metadata))
        for n, t in zip(nodes, texts, strict=True)
    ]
    path = nodes[0].metadata.get("file_path")
    meta = {"source_ref": str(path)} if path else {}
    return SourceDocument(
        doc_id=doc_id, text="\n".join(texts), source_type=_kind(nodes[0].metadata), meta=meta,
        pieces=pieces,
    )  # fmt: skip


def is_llamaindex(item: object) -> bool:
    """Whether ``item`` is a LlamaIndex Document or node (not a trilha document)."""
    return isinstance(item, BaseNode)


def to_sources(items: Iterable[object]) -> Iterator[Loaded]:
    """trilha's documents for ``items`` (LlamaIndex Documents and nodes; trilha's own
    documents and refusals pass through), grouped by the module's id rule."""
    documents: dict[str, list[Document]] = {}
    nodes: dict[str, list[BaseNode]] = {}
    for item in items:
        if isinstance(item, Document):
            documents.setdefault(document_id(item), []).append(item)
        elif isinstance(item, BaseNode):
            nodes.setdefault(node_document_id(item), []).append(item)
        elif isinstance(item, SourceDocument | Refusal):
            yield item
        else:
            yield Refusal(repr(item)[:80], "not a document: give LlamaIndex Documents or nodes")
    for doc_id, docs in documents.items():
        yield _from_documents(doc_id, docs)
    for doc_id, group in nodes.items():
        yield _from_nodes(doc_id, group)
