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
- Python blocks use ``my-workspace`` and shell blocks ``.trilha-demo`` (or a folder they make):
  a page's shell blocks run in a background thread beside its Python blocks (one ``trilha``
  process is seconds of start-up, most of this test's time), so neither may rely on what the
  other writes. :func:`test_python_and_shell_keep_to_their_workspace` holds the first half.
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
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from trilha import TrilhaSettings, Workspace
from trilha.samples import load_samples
from trilha.testing.copying import copy_workspace

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


@dataclass
class ShellRun:
    """What a page's shell blocks printed, how long each took, and the first failure."""

    output: str = ""
    times: str = ""
    failure: str | None = None


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, sample_workspace: Path) -> dict[Path, Path]:
    """Each page's folder, holding ``my-workspace`` and ``.trilha-demo``: copies of the samples."""
    made = {}
    for page in PAGES:
        folder = tmp_path_factory.mktemp("page")
        for name in ("my-workspace", ".trilha-demo"):
            copy_workspace(sample_workspace, folder / name, "*.sock", "*.lock", ".lock")
        made[page] = folder
    return made


@pytest.fixture(scope="module")
def shell_runs(folders: dict[Path, Path]) -> Iterator[dict[Path, Future[ShellRun]]]:
    """Every page's shell blocks, in page order on two background threads (a page's in order)."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        yield {page: pool.submit(run_shells, page, folders[page], env) for page in PAGES}
    finally:
        pool.shutdown(cancel_futures=True)


def run_shells(page: Path, cwd: Path, env: dict[str, str]) -> ShellRun:
    run = ShellRun()
    for block in blocks(page):
        if block.not_run is not None or block.lang == "python":
            continue
        start = time.perf_counter()
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", shell_code(block)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        run.output += done.stdout
        run.times += f"{block}: {time.perf_counter() - start:.1f} s\n"
        if done.returncode != 0:
            run.failure = (
                f"{block} exited {done.returncode}:\n{textwrap.indent(block.code, '  ')}\n"
                f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
            )
            break
    return run


def run_python(block: Block, namespace: dict[str, object], out: io.StringIO) -> None:
    code = compile(block.code, f"{block.page}:{block.line}", "exec")
    with contextlib.redirect_stdout(out):
        try:
            exec(code, namespace)
        except Exception as error:
            raise AssertionError(
                f"{block} raised {error!r}:\n{textwrap.indent(block.code, '  ')}\n"
                f"output so far:\n{out.getvalue()[-3000:]}"
            ) from error


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_s_examples_run(
    page: Path, folders: dict[Path, Path], shell_runs: dict[Path, Future[ShellRun]]
) -> None:
    out = io.StringIO()
    namespace: dict[str, object] = {"__name__": "__docs__"}
    environ, cwd = dict(os.environ), Path.cwd()
    os.chdir(folders[page])
    try:
        for block in blocks(page):
            if block.lang == "python" and block.not_run is None:
                start = time.perf_counter()
                run_python(block, namespace, out)
                print(f"{block}: {time.perf_counter() - start:.1f} s")  # pytest -s shows them
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environ)
    shells = shell_runs[page].result()
    print(shells.times, end="")
    assert shells.failure is None, shells.failure
    for expected in EXPECT.get(page.name, []):
        assert expected in out.getvalue() + shells.output, (
            f"{page.name}'s output lacks {expected!r}"
        )


def test_python_and_shell_keep_to_their_workspace() -> None:
    """Shell blocks run beside a page's Python blocks: they must not hold the same workspace."""
    crossing = [str(b) for b in ALL if b.lang == "python" and ".trilha-demo" in b.code]
    crossing += [str(b) for b in ALL if b.lang != "python" and "my-workspace" in b.code]
    assert not crossing, f"blocks that open the other kind's workspace: {crossing}"


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
