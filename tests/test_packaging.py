"""The built wheel carries profiles/, agents/ and the sample corpus, and runs outside the repo."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The built wheel and what the build printed."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-v",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return next(out.glob("trilha-*.whl")), done.stdout + done.stderr


@pytest.fixture(scope="module")
def wheel(build: tuple[Path, str]) -> Path:
    return build[0]


def test_build_prints_no_setuptools_warnings(build: tuple[Path, str]) -> None:
    log = build[1]
    assert "Successfully built trilha" in log
    assert "BuildBackendWarning" not in log and "DeprecationWarning" not in log
    assert "absent from the `packages` configuration" not in log


def test_wheel_contents(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for expected in (
        "trilha/profiles/query_profiles.yaml",
        "trilha/profiles/depth_plans.yaml",
        "trilha/profiles/retrieval_config.yaml",
        "trilha/profiles/expansions.yaml",
        "trilha/agents/knowledge.yaml",
        "trilha/config/loader.py",
        "trilha/py.typed",
        "trilha/samples/corpus/en-incident-response-runbook.md",
        "trilha/samples/principals.yaml",
        "trilha/access/policy.py",
        "trilha/samples/graph/records.jsonl",
        "trilha/orchestrate/prequery/rules.yaml",
    ):
        assert expected in names


def test_wheel_holds_every_module_of_the_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    plugin = ROOT / "plugin"
    modules = {f.relative_to(plugin).as_posix() for f in (plugin / "trilha").rglob("*.py")}
    assert modules - names == set()


def test_wheel_works_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import trilha, importlib.resources as r; "
        "print(trilha.__file__); "
        "print(len(list((r.files('trilha.samples') / 'corpus').iterdir()))); "
        "print((r.files('trilha.profiles') / 'query_profiles.yaml').is_file()); "
        "from trilha.config import load_agents, load_depth_plans, load_profiles; "
        "print(len(load_profiles().profiles), len(load_depth_plans().levels), len(load_agents()))"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            f"import sys; sys.path[:0] = {[str(site)]!r}; import site; site.main(); " + code,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    first, count, has_profiles, profiles, levels, agents = done.stdout.split()
    assert first.startswith(str(site)) and int(count) == 15 and has_profiles == "True"
    assert (profiles, levels, agents) == ("4", "5", "3")
