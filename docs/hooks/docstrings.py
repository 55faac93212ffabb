"""A griffe extension for the API pages (``extensions:`` in mkdocs.yml), for two habits of the
package's docstrings that mkdocstrings does not read by itself:

* A pydantic field documents itself with ``Field(description=...)``, a constant with ``#:``
  comment lines above it: either becomes its docstring, so the API pages list the fields of
  ContextBundle and the others.
* Docstrings name objects with Sphinx roles (``:class:`~trilha.errors.ConfigurationError```,
  ``:meth:`open```); mkdocstrings reads docstrings as Markdown, so each role becomes a code span
  that links to the object when the site documents it (an optional cross-reference: no warning
  when it does not).

A target is looked up as Sphinx does: a full path (``trilha.…``), a path relative to the current
module (``.opening``), or a name in scope of the docstring's object (its own members, its
module's names and imports). ``~`` shows the last component only; ``title <target>`` shows the
title.
"""

from __future__ import annotations

import ast
import html
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`([^`]+)`")
_TITLED = re.compile(r"^(.*?)\s*<([^>]+)>$")


def _exists(collection: Any, path: str) -> bool:
    try:
        collection[path]
    except (KeyError, ValueError, griffe.AliasResolutionError):
        return False
    return True


def resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path of ``target`` as named in ``obj``'s docstring, or None."""
    collection = obj.modules_collection
    if not target.startswith(".") and _exists(collection, target):
        return target
    if target.startswith("."):
        base = obj.module.path if obj.module.is_init_module else obj.module.parent.path  # type: ignore[union-attr]
        full = base + target
        return full if _exists(collection, full) else None
    head, _, rest = target.partition(".")
    scope: griffe.Object | None = obj
    while scope is not None:
        if head in scope.members:
            member = scope.members[head]
            try:
                base = member.target_path if isinstance(member, griffe.Alias) else member.path
            except griffe.AliasResolutionError:
                base = member.path
            full = f"{base}.{rest}" if rest else base
            return full if _exists(collection, full) else None
        scope = scope.parent
    return None


def _shown(target: str) -> str:
    """What a role shows: ``~a.b.c`` shows ``c``, a title its title."""
    titled = _TITLED.match(target)
    if titled:
        return titled.group(1)
    return target.lstrip("~").rsplit(".", 1)[-1] if target.startswith("~") else target


def rewrite(obj: griffe.Object, docstring: str) -> str:
    """``docstring`` with each role a code span, linked when its target resolves."""

    def replace(match: re.Match[str]) -> str:
        given = match.group(1)
        titled = _TITLED.match(given)
        target = (titled.group(2) if titled else given).lstrip("~")
        shown = html.escape(_shown(given)).replace("_", "&#95;").replace("*", "&#42;")
        full = resolve(obj, target)
        if full is None:
            return f"<code>{shown}</code>"
        return f'<code><autoref identifier="{full}" optional>{shown}</autoref></code>'

    return _ROLE.sub(replace, docstring)


def field_description(attr: griffe.Attribute) -> str | None:
    """The literal ``description=`` of a class attribute set to ``Field(...)``, else None."""
    call = attr.value
    if not (isinstance(call, griffe.ExprCall) and str(call.function).endswith("Field")):
        return None
    for argument in call.arguments:
        if isinstance(argument, griffe.ExprKeyword) and argument.name == "description":
            try:
                said = ast.literal_eval(str(argument.value))
            except (ValueError, SyntaxError):
                return None
            return said if isinstance(said, str) else None
    return None


def comment_above(attr: griffe.Attribute) -> str | None:
    """The ``#:`` comment lines right above an attribute (Sphinx's doc comments), else None."""
    lines = attr.module.lines
    said: list[str] = []
    number = (attr.lineno or 0) - 2  # the line above, 0-based
    while number >= 0 and lines[number].strip().startswith("#:"):
        said.insert(0, lines[number].strip()[2:].strip())
        number -= 1
    return " ".join(said) or None


class TrilhaDocstrings(griffe.Extension):
    """Once the package is loaded: fields' descriptions and constants' ``#:`` comments as their
    docstrings, then every docstring's roles rewritten."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Walk the package's own objects (not aliases)."""
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.docstring is None and isinstance(obj, griffe.Attribute):
                field = field_description(obj) if obj.parent and obj.parent.is_class else None
                said = field or comment_above(obj)
                if said:
                    obj.docstring = griffe.Docstring(said, parent=obj)
                if field:
                    obj.labels = {"field"}
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj, obj.docstring.value)
            stack += [m for m in obj.members.values() if not isinstance(m, griffe.Alias)]
