"""The docs site's generated reference pages (docs/hooks/reference.py), checked without building
the site: every ``TRILHA_*`` setting is defined once on the configuration page, every variable the
page names is a setting, every command and option of the parser is on the CLI page, and the API
pages' griffe extension links roles and reads fields' descriptions. ``make docs`` builds the
whole site with ``--strict``."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from trilha.cli.main import build_parser
from trilha.graph.model import MAX_PROFILE_HOPS
from trilha.settings import TrilhaSettings

HOOKS = Path(__file__).resolve().parents[1] / "docs" / "hooks"


def _hook(name: str) -> ModuleType:
    """The module ``docs/hooks/<name>.py`` (the folder is no package)."""
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    return _hook("reference")


def _entry(page: str, variable: str) -> str:
    """The definition of ``variable``: its term line and its description line."""
    return page.split(f'<a id="{variable.lower()}"></a>`{variable}`', 1)[1].split("\n\n", 1)[0]


def test_every_setting_is_defined_once_on_the_configuration_page(reference: ModuleType) -> None:
    page = reference.configuration_page()
    terms = re.findall(r'^<a id="[a-z0-9_]+"></a>`(TRILHA_[A-Z0-9_]+)`', page, re.MULTILINE)
    expected = [f"TRILHA_{name.upper()}" for name in TrilhaSettings.model_fields]
    assert terms == expected
    named = set(re.findall(r"\bTRILHA_[A-Z0-9_]*[A-Z0-9]\b", page))
    assert named <= set(expected), f"the page names variables that are no setting: {named}"


def test_a_setting_says_type_default_and_description(reference: ModuleType) -> None:
    page = reference.configuration_page()
    port = _entry(page, "TRILHA_SERVE_PORT")
    assert port == "\n:   `int (≥ 1, ≤ 65535)` · default `8080`. Port `trilha serve` listens on."
    groq = _entry(page, "TRILHA_GROQ_API_KEY")
    assert groq.startswith(" (also `GROQ_API_KEY`)\n:   `str | None` · default unset.")
    linked = "[`TRILHA_QDRANT_URL`](#trilha_qdrant_url)"
    assert linked in _entry(page, "TRILHA_READ_ONLY")


def test_the_configuration_files_keys_are_listed(reference: ModuleType) -> None:
    page = reference.configuration_page()
    for heading in ("query_profiles.yaml", "depth_plans.yaml", "retrieval_config.yaml"):
        assert f"### `{heading}`" in page
    hops = f"\n`profiles.<name>.max_hops`\n:   `int (≥ 1, ≤ {MAX_PROFILE_HOPS})` · required."
    assert hops in page
    assert "\n`orchestrator.instructions.always`\n" in page
    assert "\n`<language>.weight_bm25`\n:   `float (≥ 0)` · default `0.5`." in page


def _commands(
    parser: argparse.ArgumentParser, path: str = "trilha"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield f"{path} {name}", child
                yield from _commands(child, f"{path} {name}")


def test_every_command_and_option_is_on_the_cli_page(reference: ModuleType) -> None:
    page = reference.cli_page()
    commands = list(_commands(build_parser()))
    assert {"trilha query", "trilha graph path", "trilha jobs"} <= {name for name, _ in commands}
    for name, parser in commands:
        section = page.split(f"`{name}`\n", 1)[1].split("\n#", 1)[0]
        for action in parser._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                spelled = ", ".join(f"`{o}`" for o in action.option_strings)
                assert f"| {spelled} |" in section, (name, action)
    headings = re.findall(r"^#+ `(trilha [^`]+)`$", page, re.MULTILINE)
    assert headings == [name for name, _ in commands]


_PACKAGE = {
    "__init__.py": "from pkg.model import Item\n",
    "model.py": (
        "from pydantic import BaseModel, Field\n"
        "#: Kinds an item may be,\n"
        "#: in order.\n"
        "KINDS = ('a', 'b')\n"
        "class Item(BaseModel):\n"
        '    """Built by :meth:`make`; see :class:`~pkg.model.Item` and :func:`nowhere`."""\n'
        '    name: str = Field(description="What the item is " "called.")\n'
        "    def make(self) -> None: ...\n"
    ),
}


def test_the_api_pages_read_roles_and_field_descriptions() -> None:
    griffe = pytest.importorskip("griffe", reason="the docs extra builds the API pages")
    docstrings = _hook("docstrings")
    with griffe.temporary_visited_package("pkg", _PACKAGE) as pkg:
        docstrings.TrilhaDocstrings().on_package(pkg=pkg)
        item = pkg["model.Item"]
        assert item.docstring.value == (
            'Built by <code><autoref identifier="pkg.model.Item.make" optional>make</autoref>'
            '</code>; see <code><autoref identifier="pkg.model.Item" optional>Item</autoref>'
            "</code> and <code>nowhere</code>."
        )
        assert item["name"].docstring.value == "What the item is called."
        assert pkg["model.KINDS"].docstring.value == "Kinds an item may be, in order."


def _exported(init: Path) -> set[str]:
    """The names ``__all__`` lists in ``init`` (read, not imported: LlamaIndex is slow to load)."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{init} has no __all__")


def test_the_api_page_documents_every_public_name() -> None:
    package = HOOKS.parents[1] / "plugin" / "trilha"
    public = _exported(package / "__init__.py") | _exported(package / "llamaindex" / "__init__.py")
    page = (HOOKS.parent / "reference" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: trilha(?:\.llamaindex)?\.(\w+)$", page, re.MULTILINE))
    assert public - documented == {"__version__"}
