"""Every example in README.md and the guide pages (docs/*.md) runs, on the bundled samples.

How a page's fenced blocks are read (whoever writes the docs, write to this):

- ```python blocks run in this process, in page order, in one namespace per page (a page is a
  session: a later block may use what an earlier one made); ```sh and ```bash blocks run through
  ``bash -e -o pipefail`` with this virtualenv's ``bin`` (``trilha``) first on ``PATH``;
  ```console blocks run their ``$ `` lines. Other fences (```text for output, ```yaml, ```json,
  ```toml) are shown, never run.
- Each page runs in a folder of its own holding two copies of one workspace of the sample
  corpus (``load_samples``: documents, graph records, ``principals.yaml``), built once for this
  module: ``my-workspace`` (the README's quickstart opens it with ``create=True``, so as written
  it also runs on a fresh machine) and ``.trilha-demo`` (what ``make demo`` leaves).
- A block that cannot run here (a Groq key, a server that keeps running, a data set that is not
  in the repository, ``make``, which installs a virtualenv) is marked by an HTML comment on the
  line before it: ``<!-- not-run: why -->``. They are counted; more than :data:`MAX_NOT_RUN`
  fails. A ``make`` line in a block that is not so marked fails, rather than being run.

The generated reference pages (docs/reference/) are tests/test_docs_build.py's.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from trilha import TrilhaSettings, Workspace
from trilha.samples import load_samples

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Blocks marked ``<!-- not-run: ... -->`` across README and docs, at most.
MAX_NOT_RUN = 10
RUN = {"python", "sh", "bash", "console"}
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.+?)\s*-->\s*$")
#: What a page's output must hold (beside running without an error).
EXPECT = {
    "README.md": ["financeiro/reembolso-despesas-viagem", "[1]", "[False, False]"],
    "getting-started.md": ["financeiro/reembolso-despesas-viagem", "[1]"],
    "visibility.md": ["anonymous", "maria.cfo"],
    "llamaindex.md": ["[False, False]", "trilha_search"],
    "graph.md": ["graph LR"],
    "orchestrator.md": ["knowledge_agent ← intent factual"],
    "answers.md": ["[1]"],
    "service.md": ["200 ["],
}


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: str
    line: int
    lang: str
    code: str
    not_run: str | None  # why it is not run; None: it runs

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.lang})"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` whose language runs, each with its not-run mark."""
    text = path.read_text(encoding="utf-8")
    name = str(path.relative_to(ROOT))
    found = []
    for match in FENCE.finditer(text):
        lang = match.group(1).lower()
        if lang not in RUN:
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = NOT_RUN.search(before)
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(name, line, lang, match.group(2), mark.group(1) if mark else None))
    return found


ALL = [block for page in PAGES for block in blocks(page)]


def shell_code(block: Block) -> str:
    """The shell text a block runs: a console block's ``$`` lines, else the block."""
    if block.lang != "console":
        return block.code
    return "\n".join(line[2:] for line in block.code.splitlines() if line.startswith("$ "))


@pytest.fixture(scope="module")
def sample_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample corpus with its graph and users, ingested once (copied for each page)."""
    folder = tmp_path_factory.mktemp("docs-samples") / "ws"
    with Workspace.open(folder, TrilhaSettings(graph_backend="falkordb"), create=True) as ws:
        load_samples(ws)
    return folder


@pytest.fixture()
def page_dir(tmp_path: Path, sample_workspace: Path) -> Iterator[Path]:
    """A folder holding ``my-workspace`` and ``.trilha-demo``, both copies of the samples."""
    for name in ("my-workspace", ".trilha-demo"):
        shutil.copytree(
            sample_workspace,
            tmp_path / name,
            ignore=shutil.ignore_patterns("*.sock", "*.lock", ".lock"),
        )
    environ = dict(os.environ)
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environ)


def run_python(block: Block, namespace: dict[str, object], out: io.StringIO) -> None:
    code = compile(block.code, f"{block.page}:{block.line}", "exec")
    with contextlib.redirect_stdout(out):
        exec(code, namespace)


def run_shell(block: Block, cwd: Path, out: io.StringIO) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", shell_code(block)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out.write(done.stdout)
    assert done.returncode == 0, (
        f"{block} exited {done.returncode}:\n{textwrap.indent(block.code, '  ')}\n"
        f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_s_examples_run(page: Path, page_dir: Path) -> None:
    out = io.StringIO()
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in blocks(page):
        if block.not_run is not None:
            continue
        start = time.perf_counter()
        if block.lang == "python":
            try:
                run_python(block, namespace, out)
            except Exception as error:
                raise AssertionError(
                    f"{block} raised {error!r}:\n{textwrap.indent(block.code, '  ')}\n"
                    f"output so far:\n{out.getvalue()[-3000:]}"
                ) from error
        else:
            run_shell(block, page_dir, out)
        print(f"{block}: {time.perf_counter() - start:.1f} s")  # pytest -s shows each block's time
    for expected in EXPECT.get(page.name, []):
        assert expected in out.getvalue(), f"{page.name}'s output lacks {expected!r}"


def test_every_page_has_examples_and_few_are_not_run() -> None:
    readme = [b for b in ALL if b.page == "README.md"]
    assert sum(b.lang == "python" for b in readme) >= 2, "README.md: quickstart and LlamaIndex"
    not_run = [b for b in ALL if b.not_run is not None]
    report = "\n".join(f"  {b}: {b.not_run}" for b in not_run)
    print(f"{len(ALL) - len(not_run)} examples run, {len(not_run)} not run:\n{report}")
    assert len(not_run) <= MAX_NOT_RUN, f"more than {MAX_NOT_RUN} examples do not run:\n{report}"


def test_make_is_never_run() -> None:
    """``make demo`` / ``make test`` set up a virtualenv: a block naming them is marked."""
    unmarked = [
        str(b)
        for b in ALL
        if b.not_run is None and re.search(r"^\s*(\$ )?make\b", shell_code(b), re.MULTILINE)
    ]
    assert not unmarked, f"blocks that would run make: {unmarked}"
