"""Write the notebooks of this folder from their cells and run each from a fresh kernel, so the
saved notebooks show their outputs: ``python notebooks/build.py`` (needs the dev extras).

tests/test_notebooks.py runs every notebook here again the same way."""

# ruff: noqa: E501 - the cells are notebook code, shown as a reader sees them
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

#: A small folder of the user's own documents, written by each notebook's first cell.
DOCS = """import tempfile
from pathlib import Path

docs = Path(tempfile.mkdtemp()) / "docs"
docs.mkdir()
(docs / "recurso.md").write_text("---\\nlang: pt\\ntags: juridico\\n---\\n# Recurso\\n\\n"
    "O prazo de recurso é de quinze dias úteis, contados da intimação.\\n")
(docs / "ferias.md").write_text("# Férias\\n\\nAs férias são marcadas com trinta dias de antecedência.\\n")
(docs / "vpn.txt").write_text("Remote access requires the corporate VPN and a hardware token.\\n")
index_path = docs.parent / "index"
"""

QUICKSTART = [
    "# trilha quickstart: your documents as a LlamaIndex index\n\n"
    "`SimpleDirectoryReader` → `TrilhaIndex` → retriever and query engine. Runs offline.",
    DOCS,
    """from llama_index.core import SimpleDirectoryReader
from trilha import TrilhaIndex

documents = SimpleDirectoryReader(docs).load_data()
index = TrilhaIndex.from_documents(documents, path=index_path)
print(index.last_report.summary())""",
    """from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

pt = MetadataFilters(filters=[MetadataFilter(key="lang", value="pt")])
for hit in index.as_retriever(similarity_top_k=3, filters=pt).retrieve("prazo de recurso"):
    meta = hit.node.metadata
    print(f"{hit.score:.3f}  bm25={meta['trilha_bm25']}  {meta['doc_id']}")""",
    """from llama_index.core.llms import MockLLM  # any LlamaIndex LLM: Groq, OpenAI, Ollama...

engine = index.as_query_engine(llm=MockLLM(max_tokens=16), similarity_top_k=2)
response = engine.query("Qual o prazo de recurso?")
print([n.node.metadata["doc_id"] for n in response.source_nodes])
print(index.as_query_engine().query("Qual o prazo de recurso?"))  # no LLM: trilha's cited answer""",
    "Reading the folder again and refreshing changes nothing: documents are named by their "
    "`file_path`.",
    """again = SimpleDirectoryReader(docs).load_data()
print(index.refresh_ref_docs(again))
(docs / "vpn.txt").write_text("Remote access now requires the VPN and a passkey.\\n")
print(index.refresh_ref_docs(SimpleDirectoryReader(docs).load_data()))
index.close()
reopened = TrilhaIndex.open(index_path)  # reopens without re-encoding
print(sorted(reopened.ref_doc_info))
reopened.close()""",
]

PIPELINE = [
    "# Nodes you chunked yourself\n\n"
    "A node parser inside an `IngestionPipeline` chunks; `TrilhaIndex` keeps each node as one "
    "unit (its id, text, metadata and source document) and does not chunk it again.",
    DOCS,
    """from llama_index.core import SimpleDirectoryReader
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from trilha import TrilhaIndex

documents = SimpleDirectoryReader(docs).load_data()
for doc in documents:
    doc.metadata["team"] = "legal" if doc.metadata["file_name"].endswith(".md") else "it"
pipeline = IngestionPipeline(transformations=[SentenceSplitter(chunk_size=128, chunk_overlap=0)])
nodes = pipeline.run(documents=documents)
index = TrilhaIndex(nodes=nodes, path=index_path)
print(len(nodes), "nodes;", {Path(d).name: len(i.node_ids) for d, i in index.ref_doc_info.items()})""",
    """from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

it = MetadataFilters(filters=[MetadataFilter(key="team", value="it")])  # any metadata key
hits = index.as_retriever(similarity_top_k=2, filters=it).retrieve("remote access")
for hit in hits:
    print(hit.node.node_id in {n.node_id for n in nodes}, hit.node.metadata["team"], hit.node.get_content())""",
    """index.delete_ref_doc(str(docs / "vpn.txt"))  # documents are named by their file_path
print(len(index.ref_doc_info), "documents left")
index.close()""",
]


#: The packaged sample corpus (15 documents, pt-BR and en, its users and graph records) in a new
#: workspace with its knowledge graph (embedded FalkorDB, whatever TRILHA_GRAPH_BACKEND says).
SAMPLES = """import tempfile
from pathlib import Path
from trilha import TrilhaSettings, Workspace
from trilha.access.directory import find_principal
from trilha.samples import load_samples

ws = Workspace.open(Path(tempfile.mkdtemp()) / "demo", TrilhaSettings(graph_backend="falkordb"), create=True)
print(load_samples(ws).summary())
maria = find_principal(ws.path, "maria.cfo")  # a user of the sample principals.yaml"""

GRAPH = [
    "# Graph retrieval on the sample corpus\n\n"
    "The sample corpus of `trilha demo` in a workspace with its knowledge graph: a search "
    "boosted by the graph, through a LlamaIndex retriever, and the subgraph of the best document "
    "drawn as mermaid. Runs offline.",
    SAMPLES,
    """from trilha import TrilhaIndex

index = TrilhaIndex(workspace=ws)
retriever = index.as_retriever(similarity_top_k=3, kg=True, principal=maria)
hits = retriever.retrieve("Qual o prazo prescricional para cobrança de dívida?")
for hit in hits:
    meta = hit.node.metadata
    print(f"{hit.score:.3f}  kg={meta['trilha_kg']:.2f}  {meta['doc_id']}")""",
    "What the graph holds around that document, as Maria may see it: its chunks, tags, "
    "category and the criteria, facts and evidence its records name.",
    """from IPython.display import display
from trilha.graph.export.mermaid import mermaid

subgraph = ws.require_graph().subgraph(hits[0].node.metadata["doc_id"], max_hops=1, limit=15, principal=maria)
drawing = mermaid(subgraph)
index.close()  # stops the embedded graph server too
print(len(subgraph.nodes), "nodes,", len(subgraph.edges), "edges")
display({"text/markdown": f"```mermaid\\n{drawing}\\n```", "text/vnd.mermaid": drawing}, raw=True)""",
]

EVALUATION = [
    "# A small evaluation with its plot\n\n"
    "The sample corpus's judged questions (`samples/questions.yaml`, each asked as its user) "
    "searched by five of trilha's systems, scored with trec_eval's nDCG@10, Recall@100 and "
    "MRR@10 (`trilha eval` does the same on a BEIR folder such as SciFact).",
    """import tempfile
from pathlib import Path
from trilha import TrilhaSettings, Workspace
from trilha.eval.answers import demo_questions

ws = Workspace.open(Path(tempfile.mkdtemp()) / "demo", TrilhaSettings(graph_backend="falkordb"), create=True)
questions = demo_questions(ws)  # the sample corpus indexed, and its judged questions
print(len(questions), "judged questions, e.g.", questions[0].text, "->", list(questions[0].relevant))""",
    """from trilha.eval.metrics import evaluate
from trilha.eval.runner import rank_scores
from trilha.eval.systems import SPECS, hits_to_documents

qrels = {q.qid: q.relevant for q in questions}
scores = {}
for name in ["bm25", "dense", "hybrid_weighted", "hybrid_rrf", "hybrid_weighted_kg"]:
    spec = SPECS[name]
    run = {
        q.qid: rank_scores(hits_to_documents(ws.search(
            q.text, top_k=20, principal=q.principal, sides=spec.sides, merge=spec.merge, kg=spec.kg
        ).hits))
        for q in questions
    }
    scores[name] = evaluate(qrels, run)
    print(f"{name:<20}", "  ".join(f"{m}={v:.3f}" for m, v in scores[name].items()))""",
    "Sixteen questions on fifteen documents are easy: the systems tie here. On a larger "
    "judged set (`trilha eval ../shared/data/scifact`: 5,183 abstracts, 300 questions) they "
    "part; the chart below is the one `trilha eval` writes beside its JSON.",
    """from IPython.display import Image
from trilha.eval.runner import plot_metrics

png = Path(tempfile.mkdtemp()) / "eval.png"
plot_metrics(scores, png, title="sample corpus, judged questions")  # the chart `trilha eval` draws
ws.close()
Image(filename=png)""",
]


def notebook(cells: list[str]) -> nbformat.NotebookNode:
    """A notebook of ``cells``: markdown when a cell starts with '#' or has no code."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for text in cells:
        code = not (text.startswith("#") or "=" not in text)
        nb.cells.append(
            (nbformat.v4.new_code_cell if code else nbformat.v4.new_markdown_cell)(text)
        )
    return nb


def execute(nb: nbformat.NotebookNode, timeout: int = 600) -> nbformat.NotebookNode:
    """``nb`` run top to bottom in a fresh kernel, in a temporary folder (raises on an error)."""
    with tempfile.TemporaryDirectory() as folder:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": folder}}).execute()  # fmt: skip
    return nb


def main() -> None:
    """Write and run the notebooks named on the command line (default: every one here); one
    not built from cells here (workspace) is run as it is saved."""
    books = {
        "quickstart": QUICKSTART,
        "node_pipeline": PIPELINE,
        "graph": GRAPH,
        "evaluation": EVALUATION,
    }
    for name in sys.argv[1:] or [p.stem for p in sorted(HERE.glob("*.ipynb"))]:
        path = HERE / f"{name}.ipynb"
        nb = notebook(books[name]) if name in books else nbformat.read(path, as_version=4)
        nbformat.write(execute(nb), path)


if __name__ == "__main__":
    main()
