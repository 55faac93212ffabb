"""Read the shipped YAML (package data) or a given file into the config models, once.

With no path, each loader reads the copy shipped in the wheel (``trilha.profiles``,
``trilha.agents``) through :mod:`importlib.resources`. Anything wrong with a file is one
:class:`~trilha.errors.ConfigurationError` line naming the file and the key, e.g.
``query_profiles.yaml: profiles.org_context.max_hops: must be ≥ 1``.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from trilha.config.agents import AgentSpec
from trilha.config.depth import DepthPlans
from trilha.config.messages import describe
from trilha.config.profiles import ProfileSet
from trilha.config.retrieval import RetrievalConfig, Scope, apply_override
from trilha.errors import ConfigurationError

PROFILES_PACKAGE = "trilha.profiles"
AGENTS_PACKAGE = "trilha.agents"

PathLike = str | Path
M = TypeVar("M", bound=BaseModel)


def load_profiles(path: PathLike | None = None) -> ProfileSet:
    """The Query Profiles of ``path``, else the shipped ``query_profiles.yaml``."""
    source = _source(path, PROFILES_PACKAGE, "query_profiles.yaml")
    return _validate(ProfileSet, source)


def load_depth_plans(
    path: PathLike | None = None, *, profiles: ProfileSet | None = None
) -> DepthPlans:
    """The depth plans of ``path`` (else the shipped ones); each plan's profile must be one of
    ``profiles`` (else of the shipped profiles)."""
    known = list((profiles or load_profiles()).profiles)
    source = _source(path, PROFILES_PACKAGE, "depth_plans.yaml")
    return _validate(DepthPlans, source, context={"profiles": known})


def load_retrieval_config(
    path: PathLike | None = None, *, org: PathLike | None = None, user: PathLike | None = None
) -> RetrievalConfig:
    """The global RetrievalConfig of ``path`` (else the shipped one), with the partial ``org``
    and ``user`` override files laid over it in that order (see :func:`merge_configs`)."""
    source = _source(path, PROFILES_PACKAGE, "retrieval_config.yaml")
    config = _validate(RetrievalConfig, source)
    if config.scope != "global":
        raise ConfigurationError(f"{_name(path, 'retrieval_config.yaml')}: scope: must be 'global'")
    overrides: tuple[tuple[Scope, PathLike | None], ...] = (("org", org), ("user", user))
    for scope, override in overrides:
        if override is not None:
            config = apply_override_file(config, override, scope)
    return config


def apply_override_file(config: RetrievalConfig, path: PathLike, scope: Scope) -> RetrievalConfig:
    """``config`` with the partial override file ``path`` of ``scope`` laid over it."""
    changes = _read(Path(path), str(path))
    return apply_override(config, changes, scope, source=str(path))


def load_agents(path: PathLike | None = None) -> dict[str, AgentSpec]:
    """Agents by name from every ``*.yaml`` in ``path`` (a folder or one file), else the shipped
    ones. Two files defining one name are refused."""
    if path is None:
        folder: Traversable = files(AGENTS_PACKAGE)
        found = [(f, f.name) for f in folder.iterdir() if f.name.endswith(".yaml")]
    else:
        given = Path(path)
        listed = sorted(given.glob("*.yaml")) if given.is_dir() else [given]
        found = [(f, str(f)) for f in listed]
    agents: dict[str, AgentSpec] = {}
    for file, name in sorted(found, key=lambda pair: pair[1]):
        agent = _validate(AgentSpec, (file, name))
        if agent.name in agents:
            raise ConfigurationError(f"{name}: name: agent {agent.name!r} is defined twice")
        agents[agent.name] = agent
    return agents


def _source(path: PathLike | None, package: str, filename: str) -> tuple[Traversable, str]:
    if path is None:
        return files(package) / filename, filename
    return Path(path), str(path)


def _name(path: PathLike | None, filename: str) -> str:
    return filename if path is None else str(path)


def _validate(
    model: type[M], source: tuple[Traversable, str], context: dict[str, Any] | None = None
) -> M:
    data = _read(*source)
    try:
        return model.model_validate(data, context={"source": source[1], **(context or {})})
    except ValidationError as e:
        raise ConfigurationError(f"{source[1]}: {describe(e)}") from e


def _read(file: Traversable, name: str) -> dict[str, Any]:
    """The top-level mapping of a YAML file; anything else is one error line."""
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigurationError(f"{name}: cannot be read ({e.strerror or e})") from e
    except UnicodeDecodeError as e:
        raise ConfigurationError(f"{name}: is not UTF-8 text") from e
    except yaml.YAMLError as e:
        raise ConfigurationError(f"{name}: is not valid YAML ({yaml_problem(e)})") from e
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise ConfigurationError(f"{name}: must be a mapping of keys, but it is {kind}")
    return data


def yaml_problem(error: yaml.YAMLError) -> str:
    """One line saying what is wrong with a YAML text, and where."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or "unreadable"
    return f"{problem}, line {mark.line + 1}" if mark is not None else str(problem)
