"""Configuration loading: the shipped YAML (package data), a given file, or a workspace's own
copies, read into the models of :mod:`trilha.config.models` once, scopes laid over each other.

With no path, each loader reads the copy shipped in the wheel (``trilha.profiles``,
``trilha.agents``) through :mod:`importlib.resources`. Anything wrong with a file is one
:class:`~trilha.errors.ConfigurationError` line naming the file and the key, e.g.
``query_profiles.yaml: profiles.org_context.max_hops: must be ≥ 1`` (:func:`describe` turns
pydantic's ``Input should be greater than or equal to 1`` into that).

**Scopes.** One RetrievalConfig is ``global``; an ``org`` and a ``user`` config may override any
of its keys (``(:Org)-[:HAS_RETRIEVAL_CONFIG]->(:RetrievalConfig)``, the same for ``:User``).
:func:`merge_configs` is the one place scopes meet: later scopes win key by key, and nested
blocks (``orchestrator:`` and its mappings) are merged key by key too. An override naming a key
the model lacks is refused; every merged result is validated again.

**A workspace's configuration** (:class:`OrchestratorConfig`, everything the orchestrator reads):
a workspace may hold its own copies in ``<workspace>/profiles/`` (``query_profiles.yaml``,
``depth_plans.yaml``, ``retrieval_config.yaml``) and agents in ``<workspace>/agents/``; a file
that is absent is the shipped one. The organisation and user scopes are partial override files
``<workspace>/profiles/org.yaml`` and ``<workspace>/profiles/users/<user_id>.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from threading import Lock
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from trilha.config.models import AgentSpec, DepthPlans, ProfileSet, RetrievalConfig, Scope
from trilha.errors import ConfigurationError

PROFILES_PACKAGE = "trilha.profiles"
AGENTS_PACKAGE = "trilha.agents"
#: A workspace's own copies: ``<workspace>/profiles/`` and ``<workspace>/agents/``.
PROFILES_DIR = "profiles"
AGENTS_DIR = "agents"
#: A user id that can name a file in ``users/`` (no separators, no leading dot).
_FILE_NAME = re.compile(r"^[A-Za-z0-9_@-][A-Za-z0-9._@-]*$")

PathLike = str | Path
M = TypeVar("M", bound=BaseModel)
Override = Mapping[str, Any]


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


# Scopes


def merge_configs(
    global_: RetrievalConfig, org: Override | None = None, user: Override | None = None
) -> RetrievalConfig:
    """The effective config: ``global_``, then ``org``'s keys, then ``user``'s keys.

    ``org`` and ``user`` are partial configs (any subset of the keys, nested ones included); a
    key they leave out keeps the earlier scope's value. An override with an unknown key, a bad
    value or another scope raises :class:`ConfigurationError`.
    """
    if global_.scope != "global":
        raise ConfigurationError(
            f"merge_configs: global_ has scope {global_.scope!r}, not 'global'"
        )
    merged = global_
    scopes: tuple[tuple[Scope, Override | None], ...] = (("org", org), ("user", user))
    for scope, changes in scopes:
        if changes is not None:
            merged = apply_override(merged, changes, scope, source=f"{scope} override")
    return merged


def apply_override(
    base: RetrievalConfig, changes: Override, scope: Scope, *, source: str
) -> RetrievalConfig:
    """``base`` with ``changes`` laid over it key by key, as a config of ``scope``.

    ``source`` names the override in error messages (a file name, or ``'user override'``).
    """
    if changes.get("scope", scope) != scope:
        raise ConfigurationError(f"{source}: scope: is {changes['scope']!r}; expected {scope!r}")
    merged = _deep_merge(base.model_dump(), {**changes, "scope": scope})
    try:
        return RetrievalConfig.model_validate(merged, context={"source": source})
    except ValidationError as e:
        raise ConfigurationError(f"{source}: {describe(e)}") from e


def _deep_merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = _deep_merge(old, value)
        else:
            merged[key] = value
    return merged


# A workspace's configuration


@dataclass(frozen=True)
class OrchestratorConfig:
    """Everything the orchestrator reads from configuration, loaded and checked once."""

    retrieval: RetrievalConfig
    profiles: ProfileSet
    depths: DepthPlans
    agents: dict[str, AgentSpec]
    users_dir: Path | None = None
    _per_user: dict[str, RetrievalConfig] = field(default_factory=dict, compare=False)
    _lock: Lock = field(default_factory=Lock, compare=False)

    @classmethod
    def load(cls, workspace: Path | None = None) -> OrchestratorConfig:
        """The shipped configuration, with the files ``workspace`` holds laid over it."""
        folder = workspace / PROFILES_DIR if workspace is not None else None
        profiles = load_profiles(_present(folder, "query_profiles.yaml"))
        agents_dir = workspace / AGENTS_DIR if workspace is not None else None
        retrieval = load_retrieval_config(
            _present(folder, "retrieval_config.yaml"), org=_present(folder, "org.yaml")
        )
        walked = retrieval.orchestrator.working_set_profile
        if walked not in profiles.profiles:
            raise ConfigurationError(
                f"retrieval_config.yaml: orchestrator.working_set_profile: no profile named "
                f"{walked!r} (known: {', '.join(profiles.profiles)})"
            )
        return cls(
            retrieval=retrieval,
            profiles=profiles,
            depths=load_depth_plans(_present(folder, "depth_plans.yaml"), profiles=profiles),
            agents=load_agents(agents_dir if agents_dir and agents_dir.is_dir() else None),
            users_dir=folder / "users" if folder is not None else None,
        )

    def for_user(self, user_id: str) -> RetrievalConfig:
        """The config in force for ``user_id``: theirs laid over the org's, when they have one."""
        with self._lock:
            if user_id not in self._per_user:
                safe = self.users_dir is not None and _FILE_NAME.match(user_id)
                path = self.users_dir / f"{user_id}.yaml" if safe and self.users_dir else None
                config = self.retrieval
                if path is not None and path.is_file():
                    config = apply_override_file(config, path, "user")
                self._per_user[user_id] = config
            return self._per_user[user_id]


def _present(folder: Path | None, name: str) -> Path | None:
    if folder is None or not (folder / name).is_file():
        return None
    return folder / name


# One line from a ValidationError

_GOT = "not {got}"
_SAYINGS: dict[str, str] = {
    "greater_than_equal": "must be ≥ {ge}",
    "greater_than": "must be > {gt}",
    "less_than_equal": "must be ≤ {le}",
    "less_than": "must be < {lt}",
    "extra_forbidden": "unknown key; remove it or check its spelling",
    "missing": "required key is missing",
    "literal_error": "must be one of {expected}, " + _GOT,
    "int_type": "must be an integer, " + _GOT,
    "int_parsing": "must be an integer, " + _GOT,
    "int_from_float": "must be an integer, " + _GOT,
    "float_type": "must be a number, " + _GOT,
    "float_parsing": "must be a number, " + _GOT,
    "bool_type": "must be true or false, " + _GOT,
    "bool_parsing": "must be true or false, " + _GOT,
    "string_type": "must be text, " + _GOT,
    "string_too_short": "must not be empty",
    "string_pattern_mismatch": "must match {pattern}, " + _GOT,
    "dict_type": "must be a mapping of keys, " + _GOT,
    "model_type": "must be a mapping of keys, " + _GOT,
    "list_type": "must be a list, " + _GOT,
    "tuple_type": "must be a list, " + _GOT,
    "too_short": "must have at least {min_length} item(s)",
}


def describe(error: ValidationError) -> str:
    """The first problem as ``key: what it must be``, with a count of the others."""
    problems = error.errors()
    more = len(problems) - 1
    return _one(problems[0]) + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


def dotted_key(loc: Sequence[int | str]) -> str:
    """``('profiles', 'x', 'anchors', 0)`` → ``profiles.x.anchors[0]`` (dict-key markers go)."""
    key = ""
    for part in loc:
        if isinstance(part, int):
            key += f"[{part}]"
        elif part != "[key]":
            key += f".{part}" if key else part
    return key


def _one(problem: ErrorDetails) -> str:
    saying = _SAYINGS.get(problem["type"])
    if saying is None:
        text = problem["msg"].removeprefix("Value error, ")
        text = text[:1].lower() + text[1:]
    else:
        text = saying.format(**problem.get("ctx", {}), got=_shown(problem["input"]))
    key = dotted_key(problem["loc"])
    return f"{key}: {text}" if key else text


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
