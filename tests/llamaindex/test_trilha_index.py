"""TrilhaIndex, the managed index: LlamaIndex Documents and nodes in, retrievers and engines out,
with real readers, node parsers and the real workspace underneath."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import Document, NodeRelationship
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

from trilha import TrilhaIndex
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError, ConfigurationError, WorkspaceError
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

NO_GRAPH = TrilhaSettings(graph_backend="none")
TEXTS = {
    "prazo.md": "# Prazo de recurso\n\nO prazo para interpor recurso é de quinze dias úteis.",
    "ferias.md": "# Férias\n\nAs férias devem ser marcadas com trinta dias de antecedência.",
    "vpn.txt": "Remote access requires the corporate VPN and a hardware token.",
}


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in TEXTS.items():
        (docs / name).write_text(text, encoding="utf-8")
    return docs


def _index(
    path: Path, embedder: SentenceTransformerEmbedder, documents: list[Document]
) -> TrilhaIndex:
    return TrilhaIndex.from_documents(documents, path=path, settings=NO_GRAPH, embed_model=embedder)


def test_a_folder_read_twice_is_indexed_once(
    tmp_path: Path, folder: Path, embedder: SentenceTransformerEmbedder
) -> None:
    first = _index(tmp_path / "ix", embedder, SimpleDirectoryReader(folder).load_data())
    assert first.last_report.docs_added == 3
    again = _index(tmp_path / "ix", embedder, SimpleDirectoryReader(folder).load_data())
    report = again.last_report
    assert (report.docs_added, report.docs_updated, report.docs_unchanged) == (0, 0, 3)
    assert sorted(again.ref_doc_info) == sorted(str(folder / n) for n in TEXTS)
    (folder / "vpn.txt").write_text("Remote access now needs the VPN and a passkey.")
    changed = again.refresh_ref_docs(SimpleDirectoryReader(folder).load_data())
    assert changed == [False, False, True]  # the reader's order: ferias, prazo, vpn
    assert again.refresh_ref_docs(SimpleDirectoryReader(folder).load_data()) == [False] * 3
    hits = again.as_retriever(similarity_top_k=1).retrieve("passkey for remote access")
    assert hits[0].node.metadata["doc_id"] == str(folder / "vpn.txt")
    again.close()
    first.close()


def test_the_workspace_ingests_a_readers_documents(
    tmp_path: Path, folder: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        report = ws.ingest(SimpleDirectoryReader(folder).load_data())
        assert (report.docs_added, report.refused) == (3, [])
        hit = ws.search("prazo para interpor recurso", top_k=1).hits[0]
        assert hit.unit.doc_id == str(folder / "prazo.md") and hit.unit.title is None
        assert hit.unit.extra["file_name"] == "prazo.md"


def test_nodes_from_a_pipeline_stay_as_they_are(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    sentences = [f"Regra {i}: o prazo de recurso conta em dias úteis." for i in range(6)]
    docs = [
        Document(text=" ".join(sentences), id_="prazos", metadata={"author": "ana"}),
        Document(text="As férias são marcadas com trinta dias.", metadata={"author": "rui"}),
    ]
    splitter = SentenceSplitter(chunk_size=30, chunk_overlap=0)
    nodes = IngestionPipeline(transformations=[splitter]).run(documents=docs)
    assert len(nodes) > len(docs)  # chunked finer than trilha would
    index = TrilhaIndex(nodes=nodes, path=tmp_path / "ix", settings=NO_GRAPH, embed_model=embedder)
    info = index.ref_doc_info
    assert sorted(info) == sorted(d.doc_id for d in docs)  # the nodes' source documents
    assert sum(len(i.node_ids) for i in info.values()) == len(nodes)
    held = index.workspace.store.get([n.node_id for n in nodes])
    assert [held[n.node_id].text for n in nodes] == [n.get_content() for n in nodes]
    ana = MetadataFilters(filters=[MetadataFilter(key="author", value="ana")])
    hits = index.as_retriever(similarity_top_k=10, filters=ana).retrieve("férias e recurso")
    assert hits and {h.node.metadata["author"] for h in hits} == {"ana"}
    source = hits[0].node.relationships[NodeRelationship.SOURCE].node_id
    by_id = {n.node_id: n for n in nodes}
    assert source == by_id[hits[0].node.node_id].ref_doc_id
    index.delete_ref_doc(source)
    assert source not in index.ref_doc_info
    index.close()


def test_bad_metadata_is_one_clear_error_and_nothing_is_written(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    good = Document(text="Uma política válida sobre acesso remoto.", id_="good")
    bad = Document(text="Outra política.", id_="bad", metadata={"visibility": "secret"})
    index = TrilhaIndex(nodes=[], path=tmp_path / "ix", settings=NO_GRAPH, embed_model=embedder,
                        create=True)  # fmt: skip
    with pytest.raises(BadRequestError) as info:
        index.insert_nodes([good, bad])
    assert "visibility" in str(info.value) and "nothing written" in str(info.value)
    assert "\n" not in str(info.value) and index.ref_doc_info == {}
    index.insert(good.model_copy(update={"metadata": {"tags": "rh, ti", "lang": "PT"}}))
    unit = index.workspace.store.units_of(["good"])[0]
    assert (unit.tags, unit.lang) == (["rh", "ti"], "pt")  # read as front matter is
    index.close()


def test_engines_and_an_empty_index(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    index = TrilhaIndex(nodes=[], path=tmp_path / "ix", settings=NO_GRAPH, embed_model=embedder,
                        create=True)  # fmt: skip
    result = index.as_retriever().search("anything")
    assert result.hits == [] and any("is empty" in w for w in result.trace.warnings)
    assert not any(str(tmp_path) in w for w in result.trace.warnings)  # callers over HTTP see it
    index.insert(Document(text="O prazo de recurso é de quinze dias.", id_="prazo"))
    response = index.as_query_engine(llm=MockLLM(), similarity_top_k=1).query("prazo")
    assert [n.node.metadata["doc_id"] for n in response.source_nodes] == ["prazo"]
    chat = index.as_chat_engine(llm=MockLLM(), similarity_top_k=1)
    assert chat.chat("qual o prazo?").source_nodes[0].node.metadata["doc_id"] == "prazo"
    index.close()


def test_opening_a_missing_index_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="no trilha workspace at"):
        TrilhaIndex.open(tmp_path / "typo")
    assert not (tmp_path / "typo").exists()


def test_a_llamaindex_embedding_is_the_encoder_of_a_new_index(tmp_path: Path) -> None:
    docs = [Document(text="Política de férias e licenças.", id_="ferias")]
    with TrilhaIndex.from_documents(
        docs, path=tmp_path / "ix", settings=NO_GRAPH, embed_model=MockEmbedding(embed_dim=8)
    ) as index:
        assert index.workspace.embedder.dimension == 8
        assert index.as_retriever().retrieve("férias")[0].node.metadata["doc_id"] == "ferias"
    with pytest.raises(ConfigurationError) as info:
        TrilhaIndex.open(
            tmp_path / "ix", settings=NO_GRAPH, embed_model=MockEmbedding(embed_dim=16)
        )
    assert "was built with" in str(info.value) and "\n" not in str(info.value)
    ws = Workspace.open(tmp_path / "ix", NO_GRAPH, embedder=MockEmbedding(embed_dim=8))
    assert ws.search("férias", top_k=1).hits[0].unit.doc_id == "ferias"
    ws.close()


def test_settings_embed_model_is_for_new_indices(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A global ``Settings.embed_model`` (usual in LlamaIndex apps) does not stop an index built
    with another encoder from opening: it keeps its own; an index built with that model takes it."""
    from llama_index.core import Settings

    docs = [Document(text="Política de férias e licenças.", id_="ferias")]
    _index(tmp_path / "own", embedder, docs).close()
    monkeypatch.setattr(Settings, "_embed_model", MockEmbedding(embed_dim=8))
    with TrilhaIndex.open(tmp_path / "own", settings=NO_GRAPH) as index:
        assert index.workspace.embedder.model_id == embedder.model_id
    with TrilhaIndex.from_documents(docs, path=tmp_path / "mock", settings=NO_GRAPH) as index:
        assert index.workspace.embedder.dimension == 8
    with TrilhaIndex.open(tmp_path / "mock", settings=NO_GRAPH) as index:
        assert index.as_retriever().retrieve("férias")[0].node.metadata["doc_id"] == "ferias"


def test_a_folder_with_nothing_readable_says_what_is_read(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.pdf").write_bytes(b"%PDF-1.4")
    with Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True) as ws:
        report = ws.ingest_path(tmp_path / "in")
    assert [r.reason for r in report.refused] == [
        "no file to read here; trilha reads .md, .markdown, .txt, .jsonl files"
    ]
