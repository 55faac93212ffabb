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


AGENTS = [
    "# Agents with trilha's tools\n\n"
    "A LlamaIndex `FunctionAgent` given trilha's agent tools over your own documents: "
    "`trilha_context` (the orchestrator's cited context for one user) and `trilha_search` "
    "(hybrid search with citations). Each tool is bound to the user it was made for; the model "
    "chooses only the arguments its schema advertises. Runs offline.",
    DOCS,
    """from llama_index.core import SimpleDirectoryReader
from trilha import Principal, TrilhaIndex
from trilha.orchestrate import Orchestrator

index = TrilhaIndex.from_documents(SimpleDirectoryReader(docs).load_data(), path=index_path)
ana, bia = Principal(user_id="ana"), Principal(user_id="bia")
orchestrator = Orchestrator(index.workspace, principals={"ana": ana, "bia": bia})  # who may ask
print(index.last_report.summary())""",
    """import json
from trilha.llamaindex.context import context_tool
from trilha.llamaindex.search_tool import search_tool

tools = [
    context_tool(orchestrator, user_id="ana", conversation_id="c-1"),  # acts for ana, always
    search_tool(index.workspace, ana),  # fixed fields too: search_tool(ws, ana, kg=True, ...)
]
for tool in tools:
    print(tool.metadata.name, list(tool.metadata.get_parameters_dict()["properties"]))
print(json.dumps(tools[1].metadata.to_openai_tool(), indent=1, ensure_ascii=False))  # what a model sees""",
    "The model here is `ScriptedLLM`, a stand-in for a function-calling LLM: like a real one it "
    "sees each tool only as the JSON above, and `call_each_tool()` calls every tool once with "
    "arguments built from that schema alone (the question for a required text, the schema's "
    "defaults for the rest), then answers from what the tools returned, with their citations. "
    "A real model goes in its place, unchanged otherwise: Groq through `llama-index-llms-groq` "
    "(`pip install 'trilha[llm]'`, `GROQ_API_KEY`), OpenAI, Ollama, or whatever `Settings.llm` "
    "holds. With a knowledge graph (see the graph notebook), "
    "`trilha.llamaindex.tools.graph_tools(ws, principal)` adds the `trilha_graph_*` tools.",
    """from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from trilha.testing.scripted_llm import ScriptedLLM, call_each_tool

llm = ScriptedLLM(call_each_tool())
# from llama_index.llms.groq import Groq; llm = Groq(model="llama-3.3-70b-versatile")  # a real LLM
agent = FunctionAgent(tools=tools, llm=llm, system_prompt="Answer only from the tools; cite each source.")
handler = agent.run(user_msg="Qual o prazo de recurso?")
async for event in handler.stream_events():
    if isinstance(event, ToolCallResult):
        print(f"{event.tool_name}({event.tool_kwargs})\\n{event.tool_output.content}\\n")
response = await handler
print("answer:", response.response.content)""",
    "A tool's raw output keeps everything the model's text leaves out: the `ContextBundle` of "
    "`trilha_context`, the `SearchResult` (every score, the trace) of `trilha_search`.",
    """context = tools[0].call(question="férias")  # a call as the agent makes it
print(type(context.raw_output).__name__, [item.citation.label for item in context.raw_output.context_items])
try:
    tools[1].call(query="férias", user_id="bob")  # an argument its schema does not hold
except Exception as refused:  # the agent hands this line back to the model
    print(type(refused).__name__, refused)""",
    "trilha's own agents (`agents/*.yaml`: knowledge, task and user, in one `AgentWorkflow`) "
    "through `ask_agents`: the question's intent picks the agent, which calls `trilha_context` "
    "and cites it (asked as bia, whose memory holds no earlier question). This is the sync "
    "API, called inside the event loop Jupyter runs each cell in "
    "(the workflow then runs on a worker thread's loop; `await aask_agents(...)` keeps this one "
    "free). There is no graph here, so the graph tools the agents name are left out, with a "
    "warning.",
    """import asyncio
from trilha.llamaindex.agent_run import ask_agents

print("inside a running loop:", asyncio.get_running_loop().is_running())
answer = ask_agents(orchestrator, ScriptedLLM(), "Qual o prazo de recurso?", user_id="bia", conversation_id="c-2")
print(answer.route.explain())
print(answer.agent, "called", [r.tool_name for r in answer.tool_results])
print(answer.text)
orchestrator.close()
index.close()""",
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
        "agents": AGENTS,
    }
    for name in sys.argv[1:] or [p.stem for p in sorted(HERE.glob("*.ipynb"))]:
        path = HERE / f"{name}.ipynb"
        nb = notebook(books[name]) if name in books else nbformat.read(path, as_version=4)
        nbformat.write(execute(nb), path)


if __name__ == "__main__":
    main()
