"""The docs site's generated reference pages, written at build time so they cannot drift.

``reference/configuration.md`` is read from :class:`trilha.settings.TrilhaSettings`' fields (every
``TRILHA_*`` variable once, with its type, default and description) and from the models of the
configuration files (:mod:`trilha.config.models`, :class:`trilha.settings.Fusion`);
``reference/cli.md`` from the ``trilha`` command's argparse parser. MkDocs runs this module as a
hook (``hooks:`` in mkdocs.yml): :func:`on_files` adds both pages to the build; nothing generated
is committed. ``tests/test_docs_build.py`` checks the pages without building the site.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import types
import typing
from collections.abc import Collection, Iterator
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

ENV_PREFIX = "TRILHA_"
CONFIGURATION_PAGE = "reference/configuration.md"
CLI_PAGE = "reference/cli.md"
#: A table row: one cell per column.
Row = tuple[str, ...]


# Markdown text

#: A name in capitals (``TRILHA_TOP_K``), which a description may link to.
_NAME = re.compile(r"\b[A-Z][A-Z0-9_]*[A-Z0-9]\b")


def text(value: str, names: Collection[str] = ()) -> str:
    """``value`` as Markdown text on one line: code spans kept as they are; outside them HTML,
    ``*`` and pipes escaped and each of ``names`` a link to the anchor of its lower-case."""
    parts = value.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):
        said = html.escape(parts[i], quote=False).replace("*", r"\*").replace("|", r"\|")
        if names:
            said = _NAME.sub(lambda m: _link(m.group(0), names), said)
        parts[i] = said
    return "`".join(parts)


def _link(name: str, names: Collection[str]) -> str:
    return f"[`{name}`](#{name.lower()})" if name in names else name


def code(value: str) -> str:
    """``value`` as a code span (a table keeps the pipes of a code span in its cell)."""
    return f"`{value}`"


def table(header: tuple[str, ...], rows: list[Row]) -> list[str]:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


# Types and defaults of pydantic fields


_BOUNDS = (
    (annotated_types.Gt, "gt", "> "),
    (annotated_types.Ge, "ge", "≥ "),
    (annotated_types.Lt, "lt", "< "),
    (annotated_types.Le, "le", "≤ "),
    (annotated_types.MinLen, "min_length", "at least "),
    (annotated_types.MaxLen, "max_length", "at most "),
)


def bounds(metadata: list[Any]) -> list[str]:
    """The numeric and length bounds among a field's or type's metadata, as words."""
    out = []
    for item in metadata:
        for kind, attr, word in _BOUNDS:
            if isinstance(item, kind):
                out.append(f"{word}{getattr(item, attr)}")
        if isinstance(item, FieldInfo):
            out += bounds(item.metadata)
    return out


def type_name(annotation: Any) -> str:
    """A type as a reader writes its values: ``'a' | 'b'`` for a Literal, bounds spelled out."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin is typing.Annotated:
        said = bounds(list(args[1:]))
        return type_name(args[0]) + (f" ({', '.join(said)})" if said else "")
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return f"list[{type_name(args[0])}]"
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(map(type_name, args))}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def field_type(field: FieldInfo) -> str:
    """A field's type with its own bounds."""
    said = bounds(field.metadata)
    return type_name(field.annotation) + (f" ({', '.join(said)})" if said else "")


def default_of(field: FieldInfo) -> str:
    """A field's default as it is written in the environment or a file (a code span), else
    'required' or 'unset'."""
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool | dict | list | tuple) or value == "":
        return code(json.dumps(value, ensure_ascii=False))
    return code(str(value))


def described(model: type[BaseModel]) -> Iterator[tuple[str, FieldInfo]]:
    """A model's fields, each with its description (a field without one is an error)."""
    for name, field in model.model_fields.items():
        if not field.description:
            raise ValueError(f"{model.__name__}.{name} has no description")
        yield name, field


# The configuration page


def env_names(name: str, field: FieldInfo) -> list[str]:
    """The environment variables of a setting: ``TRILHA_<NAME>``, then any other name it reads."""
    primary = f"{ENV_PREFIX}{name.upper()}"
    choices = getattr(field.validation_alias, "choices", [])
    others = [c for c in choices if isinstance(c, str) and c.isupper() and c != primary]
    return [primary, *others]


def entry(key: str, field: FieldInfo, anchor: str = "", names: Collection[str] = ()) -> list[str]:
    """A field as a definition: its key (Markdown), then its type, default and description
    (``names``: variables the description links to)."""
    head = f'<a id="{anchor}"></a>{key}' if anchor else key
    said = text(field.description or "", names)
    default = default_of(field)
    default = default if default == "required" else f"default {default}"
    return [head, f":   {code(field_type(field))} · {default}. {said}", ""]


def settings_entries() -> list[str]:
    """One definition per setting: its variable (and any other name it reads), type, default,
    description, each ``TRILHA_*`` variable it names linked to its own."""
    from trilha.settings import TrilhaSettings

    fields = list(described(TrilhaSettings))
    names = {env_names(name, field)[0] for name, field in fields}
    lines: list[str] = []
    for name, field in fields:
        primary, *others = env_names(name, field)
        also = f" (also {', '.join(map(code, others))})" if others else ""
        lines += entry(code(primary) + also, field, primary.lower(), names)
    return lines


def model_entries(model: type[BaseModel], prefix: str = "") -> list[str]:
    """One definition per key of a configuration file's model, nested models' keys dotted."""
    lines: list[str] = []
    for name, field in described(model):
        key = f"{prefix}{name}"
        lines += entry(code(key), field)
        nested = _nested_model(field.annotation)
        if nested is not None:
            inner, keyed = nested
            lines += model_entries(inner, f"{key}.<name>." if keyed else f"{key}.")
    return lines


def _nested_model(annotation: Any) -> tuple[type[BaseModel], bool] | None:
    """The model a field holds (``True``: as the values of a mapping), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if typing.get_origin(annotation) is dict:
        value = typing.get_args(annotation)[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value, True
    return None


def config_files() -> list[tuple[str, str, type[BaseModel], str]]:
    """Each configuration file: its name, what it holds, its model, and the key prefix."""
    from trilha.config.models import AgentSpec, DepthPlans, ProfileSet, RetrievalConfig
    from trilha.settings import Fusion

    return [
        (
            "query_profiles.yaml",
            "The Query Profiles graph walks follow, and which intent walks which profile.",
            ProfileSet,
            "",
        ),
        (
            "depth_plans.yaml",
            "What each depth level (D0–D4) reads, with which profile, within how many tokens.",
            DepthPlans,
            "",
        ),
        (
            "retrieval_config.yaml",
            "Limits, default strategies per intent, and how the orchestrator fills a "
            "ContextBundle. `org.yaml` and `users/<user_id>.yaml` override any of its keys.",
            RetrievalConfig,
            "",
        ),
        (
            "agents/*.yaml",
            "One agent per file: the intents it answers, its tools and style.",
            AgentSpec,
            "",
        ),
        (
            "fusion.yaml",
            "The fusion per query language: a `default` entry for every language and an entry "
            "per language code, each setting any of these keys. A workspace's own is "
            "`<workspace>/fusion.yaml`, written by `trilha tune`; `TRILHA_MERGE`, "
            "`TRILHA_WEIGHT_*`, `TRILHA_RRF_K`, `TRILHA_BM25_K1`, `TRILHA_BM25_B` and "
            "`TRILHA_FUSION_BY_LANG` win over both.",
            Fusion,
            "<language>.",
        ),
    ]


def configuration_page() -> str:
    """The Markdown of ``reference/configuration.md``."""
    lines = [
        "# Configuration",
        "",
        "<!-- Generated by docs/hooks/reference.py from trilha.settings and trilha.config.models;"
        " edit the field descriptions there. -->",
        "",
        "## Environment variables",
        "",
        "trilha reads its settings from `TRILHA_*` environment variables when a "
        "`TrilhaSettings()` is built (never at import time); keyword arguments override them: "
        "`TrilhaSettings(top_k=5)`. Unset means the feature is off or chooses for itself, as "
        "the description says.",
        "",
        *settings_entries(),
        "## Configuration files",
        "",
        "The files shipped in `trilha.profiles` and `trilha.agents` are the defaults. A workspace "
        "may hold its own copies in `<workspace>/profiles/` and `<workspace>/agents/`; a file "
        "that is absent there is the shipped one. Unknown keys are refused with one line naming "
        "the file and the key.",
    ]
    for name, what, model, prefix in config_files():
        lines += ["", f"### `{name}`", "", what, "", *model_entries(model, prefix)]
    return "\n".join(lines) + "\n"


# The CLI page


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:  # type: ignore[type-arg]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def commands(
    parser: argparse.ArgumentParser, path: str = "trilha"
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """Every command under ``parser``, depth first: its full name, its help, its parser."""
    sub = _subparsers(parser)
    if sub is None:
        return
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    for name, child in sub.choices.items():
        full = f"{path} {name}"
        yield full, helps.get(name, ""), child
        yield from commands(child, full)


def option_rows(parser: argparse.ArgumentParser) -> list[Row]:
    """One row per argument of ``parser`` (not its subcommands, not ``--help``): its names,
    what it takes (its choices or its value's name) and its help."""
    formatter = parser._get_formatter()
    rows: list[Row] = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        names = action.option_strings or [str(action.metavar or action.dest)]
        takes = ""
        if action.choices is not None:
            takes = code(" | ".join(map(str, action.choices)))
        elif action.option_strings and action.nargs != 0:
            takes = code(str(action.metavar or action.dest.upper()))
        said = formatter._expand_help(action) if action.help else ""
        if action.default not in (None, False, argparse.SUPPRESS) and "default" not in said:
            said += f" (default: {action.default})"
        rows.append((", ".join(map(code, names)), takes, text(said.strip())))
    return rows


def usage(parser: argparse.ArgumentParser) -> str:
    """The usage lines of ``parser``, wrapped at 80 columns whatever the terminal."""
    formatter = argparse.HelpFormatter(parser.prog, width=80)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def cli_page() -> str:
    """The Markdown of ``reference/cli.md``."""
    from trilha.cli.main import build_parser

    parser = build_parser()
    lines = [
        "# Command line",
        "",
        "<!-- Generated by docs/hooks/reference.py from the trilha command's parser"
        " (trilha.cli); edit the help there. -->",
        "",
        text(parser.description or "") + " Errors are one line saying what to do, with exit "
        "status 2.",
        "",
        "```text",
        usage(parser),
        "```",
        "",
        *table(("Option", "Takes", "Help"), option_rows(parser)),
    ]
    for full, helptext, sub in commands(parser):
        level = "#" * min(full.count(" ") + 1, 4)
        lines += ["", f"{level} `{full}`", "", text(helptext), "", "```text"]
        lines += [usage(sub), "```", ""]
        rows = option_rows(sub)
        lines += table(("Argument", "Takes", "Help"), rows) if rows else []
    return "\n".join(lines) + "\n"


# The MkDocs hook

PAGES = {CONFIGURATION_PAGE: configuration_page, CLI_PAGE: cli_page}


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site's files (MkDocs calls this before the nav is built)."""
    from mkdocs.structure.files import File

    for uri, render in PAGES.items():
        old = files.get_file_from_path(uri)
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, uri, content=render()))
    return files


if __name__ == "__main__":  # print a page: python docs/hooks/reference.py reference/cli.md
    import sys

    print(PAGES[sys.argv[1] if len(sys.argv) > 1 else CONFIGURATION_PAGE](), end="")
