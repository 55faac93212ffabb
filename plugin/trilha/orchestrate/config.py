"""The orchestrator's configuration: Query Profiles, depth plans, RetrievalConfig and agents.

A workspace may hold its own copies in ``<workspace>/profiles/`` (``query_profiles.yaml``,
``depth_plans.yaml``, ``retrieval_config.yaml``) and agents in ``<workspace>/agents/``; a file
that is absent is the shipped one. Organisation and user scopes (seed 004's
``(:Org|:User)-[:HAS_RETRIEVAL_CONFIG]->``) are partial override files
``<workspace>/profiles/org.yaml`` and ``<workspace>/profiles/users/<user_id>.yaml``, laid over the
global config key by key (:func:`trilha.config.merge_configs`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock

from trilha.config import (
    AgentSpec,
    DepthPlans,
    ProfileSet,
    RetrievalConfig,
    load_agents,
    load_depth_plans,
    load_profiles,
    load_retrieval_config,
)
from trilha.config.loader import apply_override_file
from trilha.errors import ConfigurationError

PROFILES_DIR = "profiles"
#: A user id that can name a file in ``users/`` (no separators, no leading dot).
_FILE_NAME = re.compile(r"^[A-Za-z0-9_@-][A-Za-z0-9._@-]*$")
AGENTS_DIR = "agents"


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
