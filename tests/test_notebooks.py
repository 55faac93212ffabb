"""Every notebook in notebooks/ runs top to bottom from a fresh kernel (nbclient), in a
temporary folder; the saved notebooks hold their outputs (written by notebooks/build.py)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from notebooks.build import execute

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
#: What a notebook's run must print, in order (a notebook not named here: no error is enough).
PRINTED = {
    "agents.ipynb": [
        '"name": "trilha_search"',  # the advertised schema
        "trilha_context({'question': 'Qual o prazo de recurso?'})",  # the agent's tool calls
        "trilha_search({'query': 'Qual o prazo de recurso?'",
        "answer: trilha_context:\n- O prazo de recurso é de quinze dias úteis",  # cited
        "BadRequestError trilha_search: user_id: extra inputs are not permitted",
        "inside a running loop: True",
        "knowledge_agent called ['trilha_context']",  # ask_agents, sync, in the loop
        "- O prazo de recurso é de quinze dias úteis, contados da intimação. (source: ",
    ],
}


#: The notebooks `make test` runs (a new user's first two: LlamaIndex, then agents); `make check`
#: runs the others too, each from a fresh kernel as well.
FIRST_CONTACT = {"quickstart.ipynb", "agents.ipynb"}
RUNS = [
    pytest.param(p, marks=() if p.name in FIRST_CONTACT else pytest.mark.sweep, id=p.name)
    for p in NOTEBOOKS
]


@pytest.mark.parametrize("path", RUNS)
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRILHA_GRAPH_BACKEND", "none")  # the kernel inherits it
    saved = nbformat.read(path, as_version=4)
    code = [c for c in saved.cells if c.cell_type == "code"]
    assert code and all(c.outputs for c in code if "print(" in c.source)  # outputs shown
    ran = execute(nbformat.read(path, as_version=4))
    assert not [o for c in ran.cells if c.cell_type == "code" for o in c.outputs
                if o.output_type == "error"]  # fmt: skip
    printed = "".join(o.get("text", "") for c in ran.cells if c.cell_type == "code"
                      for o in c.outputs if o.get("name") == "stdout")  # fmt: skip
    at = 0
    for expected in PRINTED.get(path.name, []):
        at = printed.find(expected, at)
        assert at >= 0, f"{path.name} no longer prints {expected!r}:\n{printed}"


def _outputs(name: str) -> list[dict[str, object]]:
    saved = nbformat.read(NOTEBOOKS[0].parent / f"{name}.ipynb", as_version=4)
    return [o for c in saved.cells if c.cell_type == "code" for o in c.outputs]


def test_the_graph_and_evaluation_notebooks_show_their_drawings() -> None:
    drawings = [o["data"] for o in _outputs("graph") if o["output_type"] == "display_data"]
    assert any(str(d.get("text/markdown", "")).startswith("```mermaid\ngraph LR") for d in drawings)
    assert any("image/png" in o.get("data", {}) for o in _outputs("evaluation"))
