"""Every knob is read: each field of the settings and of every config model is read by some
package code outside the module that declares it (an attribute read, a ``getattr`` name, or a
name listed as a string), or by a method of the model that such code calls
(``settings.access_defaults()``, ``config.strategy_for(intent)``), so that no setting or config
key is validated and documented for nothing."""

from __future__ import annotations

import ast
import inspect
import logging
from pathlib import Path

import pytest
from pydantic import BaseModel

from trilha.config import (
    AgentSpec,
    DepthPlan,
    DepthPlans,
    Instructions,
    OrchestratorDefaults,
    ProfileSet,
    QueryProfile,
    RetrievalConfig,
)
from trilha.server.config import KeyEntry, ProjectEntry, ServiceConfig
from trilha.settings import Fusion, TrilhaSettings, Weights

PACKAGE = Path(inspect.getfile(TrilhaSettings)).parent
MODELS: list[type[BaseModel]] = [
    TrilhaSettings,
    Fusion,
    Weights,
    RetrievalConfig,
    OrchestratorDefaults,
    Instructions,
    DepthPlans,
    DepthPlan,
    ProfileSet,
    QueryProfile,
    AgentSpec,
    ServiceConfig,
    ProjectEntry,
    KeyEntry,
]


def _reads(tree: ast.AST, names: set[str], prefixes: set[str]) -> None:
    """Add the attribute names read and the string constants of ``tree`` to ``names``, and the
    constant prefixes of f-strings handed to ``getattr`` (``f"default_strategy_{intent}"``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.JoinedStr)
            and isinstance(node.args[1].values[0], ast.Constant)
        ):
            prefixes.add(str(node.args[1].values[0].value))


def _names_read(model: type[BaseModel]) -> tuple[set[str], set[str]]:
    """What the package reads outside ``model``'s module, plus what the model's own methods
    read when something outside calls them."""
    own = Path(inspect.getfile(model))
    names: set[str] = set()
    prefixes: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path != own:
            _reads(ast.parse(path.read_text(encoding="utf-8")), names, prefixes)
    for node in ast.walk(ast.parse(own.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef) and node.name == model.__name__:
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name in names:
                    _reads(method, names, prefixes)
    return names, prefixes


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_is_read_by_package_code(model: type[BaseModel]) -> None:
    names, prefixes = _names_read(model)
    unread = [
        field
        for field in model.model_fields
        if field not in names and not any(field.startswith(p) for p in prefixes)
    ]
    assert unread == [], f"{model.__name__}: fields read by nothing: {unread}"


def test_a_retired_variable_still_set_is_named_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import trilha.settings as module

    monkeypatch.setenv("TRILHA_KG_BOOST_MAX_CONCURRENCY", "4")
    monkeypatch.setattr(module, "_RETIRED_SAID", set())
    with caplog.at_level(logging.WARNING, logger="trilha.settings"):
        module.TrilhaSettings()
        module.TrilhaSettings()
    said = [r.getMessage() for r in caplog.records if "RETIRED" in r.getMessage().upper()]
    assert said == [
        "TRILHA_KG_BOOST_MAX_CONCURRENCY is retired and ignored: the boost runs once per search, "
        "nothing to cap; unset it"
    ]
