"""Which workspaces a service serves, for which tenants, and the API keys that name callers.

A service file (``trilha serve --config service.yaml``)::

    projects:
      atlas:                      # the project_id callers name
        workspace: ./ws-atlas     # relative to this file
        tenant: acme
    keys:
      - sha256: 9f86d0…          # sha256 of the key (hex); or `key: …` in plain, for tests
        tenant: acme
        user: ana                 # a user of the workspace's principals.yaml, or:
        # principal: {user_id: ana, roles: [finance], clearance: 1}
        operator: false           # true: may read GET /v1/jobs/stats
    anonymous: false              # calls without a key act as the anonymous principal

A key names a tenant and a principal; a caller never names either in a request body. Without a
file, ``trilha serve -w WS`` serves one workspace as project ``default`` to anonymous callers
(public items only). A file that does not parse, or a field that is wrong, is one
:class:`~trilha.errors.BadRequestError` line naming the file and the place.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trilha.access.principal import Principal
from trilha.errors import BadRequestError, one_line

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class ProjectEntry(BaseModel):
    """A workspace served under a project id, owned by one tenant."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workspace: Path = Field(description="The workspace folder.")
    tenant: str = Field(min_length=1, description="The tenant whose keys may read it.")


class KeyEntry(BaseModel):
    """One API key: its hash (or, for tests, the key itself), its tenant and its principal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str | None = Field(None, description="Hex sha256 of the key.")
    key: str | None = Field(None, min_length=16, description="The key in plain (tests only).")
    tenant: str = Field(min_length=1, description="The tenant the key belongs to.")
    user: str | None = Field(None, description="A user of the workspace's principals.yaml.")
    principal: Principal | None = Field(None, description="The principal's fields, inline.")
    operator: bool = Field(False, description="May read the projects' job statistics.")

    @model_validator(mode="after")
    def _one_of_each(self) -> KeyEntry:
        if (self.sha256 is None) == (self.key is None):
            raise ValueError("give the key's sha256 (hex) or, for tests, the key; exactly one")
        if self.sha256 is not None and not _HEX64.match(self.sha256):
            raise ValueError("sha256 must be 64 lower-case hex digits")
        if self.user is not None and self.principal is not None:
            raise ValueError("give user or principal, not both")
        return self

    @property
    def digest(self) -> str:
        """The sha256 the presented key is compared with."""
        return self.sha256 or key_digest(self.key or "")


class ServiceConfig(BaseModel):
    """Projects, keys and whether keyless calls are served (as anonymous)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    projects: dict[str, ProjectEntry] = Field(min_length=1, description="By project id.")
    keys: list[KeyEntry] = Field(default_factory=list, description="API keys.")
    anonymous: bool = Field(False, description="Serve calls without a key as anonymous.")
    anonymous_tenant: str | None = Field(
        None, description="The tenant keyless calls read (default: the only one, if one)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ServiceConfig:
        tenants = {p.tenant for p in self.projects.values()}
        for i, k in enumerate(self.keys):
            if k.tenant not in tenants:
                raise ValueError(f"keys[{i}] names tenant {k.tenant!r}, which owns no project")
        digests = [k.digest for k in self.keys]
        if len(set(digests)) != len(digests):
            raise ValueError("two keys are the same key; give each caller its own")
        if self.anonymous and self.anonymous_tenant is None and len(tenants) > 1:
            raise ValueError("anonymous calls need anonymous_tenant when several tenants exist")
        if self.anonymous_tenant is not None and self.anonymous_tenant not in tenants:
            raise ValueError(f"anonymous_tenant {self.anonymous_tenant!r} owns no project")
        if not self.anonymous and not self.keys:
            raise ValueError("no keys and anonymous: false; nobody could call the service")
        return self

    @property
    def open_tenant(self) -> str | None:
        """The tenant keyless calls read, or None when they are refused."""
        if not self.anonymous:
            return None
        return self.anonymous_tenant or next(iter(self.projects.values())).tenant

    @classmethod
    def single(cls, workspace: Path) -> ServiceConfig:
        """One workspace as project ``default``, served to anonymous callers only."""
        entry = ProjectEntry(workspace=workspace, tenant="default")
        return cls(projects={"default": entry}, anonymous=True)


def key_digest(key: str) -> str:
    """The hex sha256 of an API key, as a service file stores it."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def load_service_config(path: Path) -> ServiceConfig:
    """The service file at ``path``; workspace paths are taken relative to it."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadRequestError(f"{path}: no such file; give the service file's path") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BadRequestError(f"{path}: cannot read it ({e}); make it a UTF-8 YAML file") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise BadRequestError(f"{path}: not valid YAML{where}; fix the file") from None
    if not isinstance(data, dict):
        raise BadRequestError(f"{path}: expected a mapping with projects and keys")
    _anchor(data, path.parent)
    try:
        return ServiceConfig.model_validate(data)
    except ValidationError as e:
        raise BadRequestError(f"{path}: {one_line(e)}") from None


def _anchor(data: dict[str, Any], base: Path) -> None:
    """Relative workspace paths, taken from the file's folder."""
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return
    for entry in projects.values():
        if isinstance(entry, dict) and isinstance(entry.get("workspace"), str):
            folder = Path(entry["workspace"]).expanduser()
            entry["workspace"] = folder if folder.is_absolute() else base / folder
