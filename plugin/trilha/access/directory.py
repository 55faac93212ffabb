"""Principals defined in a workspace file, ``<workspace>/principals.yaml``::

    principals:
      ana:
        org_ids: [acme]
        project_ids: [atlas]
        roles: [finance]
        hierarchy_level: 2
        clearance: 1

Each key is a user id; its fields are those of :class:`~trilha.access.principal.Principal`
(``user_id`` is the key). A file that does not parse, or a field that is unknown or of the wrong
type, is one :class:`~trilha.errors.BadRequestError` line naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from trilha.access.principal import Principal
from trilha.errors import BadRequestError, one_line

#: The file, inside a workspace, that names its principals.
PRINCIPALS_FILE = "principals.yaml"


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadRequestError(f"{path}: no such file") from None
    except OSError as e:
        raise BadRequestError(
            f"{path}: cannot read it ({e.strerror or e}); make it a readable YAML file"
        ) from None
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise BadRequestError(f"{path}: not valid YAML{where}; fix the file") from None


def principal_of(fields: Any, where: str, user_id: str | None = None) -> Principal:
    """A principal from a mapping of its fields; ``where`` names the source in errors."""
    if not isinstance(fields, dict):
        raise BadRequestError(f"{where}: a principal is a mapping of fields (org_ids, roles...)")
    data = dict(fields)
    if user_id is not None and data.setdefault("user_id", user_id) != user_id:
        raise BadRequestError(f"{where}: user_id {data['user_id']!r} differs from its key")
    try:
        return Principal.model_validate(data)
    except ValidationError as e:
        raise BadRequestError(f"{where}: {one_line(e)}") from None


def load_principals(path: Path) -> dict[str, Principal]:
    """The principals a ``principals.yaml`` defines, by user id."""
    data = _read_yaml(path)
    entries = data.get("principals") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise BadRequestError(f"{path}: expected a 'principals:' mapping of user id -> fields")
    return {
        str(uid): principal_of(fields, f"{path}: principals.{uid}", str(uid))
        for uid, fields in entries.items()
    }


def load_principal_file(path: Path) -> Principal:
    """One principal from a YAML or JSON file of its fields (``--as-principal FILE``)."""
    return principal_of(_read_yaml(path), str(path))


def find_principal(workspace: Path | str, user_id: str) -> Principal:
    """The principal ``user_id`` of the ``principals.yaml`` in the workspace folder
    ``workspace`` (``ws.path``)."""
    path = Path(workspace) / PRINCIPALS_FILE
    if not path.exists():
        raise BadRequestError(
            f"workspace {workspace} has no {PRINCIPALS_FILE}; define users there, or give the "
            "principal's fields (Principal(...), or --as-principal FILE on the command line)"
        )
    return principal_in(load_principals(path), user_id, str(path))


def principal_in(known: Mapping[str, Principal], user_id: str, where: str) -> Principal:
    """``known[user_id]``; a :class:`BadRequestError` naming ``where`` the users come from and
    who they are when ``user_id`` is not one of them."""
    if user_id not in known:
        listed = ", ".join(sorted(known)) or "none"
        raise BadRequestError(
            f"user {user_id!r} is not in {where}; known users: {listed} (add them there)"
        )
    return known[user_id]
