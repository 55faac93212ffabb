"""Who may see what: principals, the visibility policy and its compiled forms."""

from trilha.access.compiled import CompiledPolicy, PolicyCache, compile_policy
from trilha.access.policy import ACCESS_KEYS, Access, scope_key, visibility_filter, visible
from trilha.access.principal import Principal
from trilha.types import OPEN_ACL, VISIBILITIES

__all__ = [
    "ACCESS_KEYS",
    "OPEN_ACL",
    "VISIBILITIES",
    "Access",
    "CompiledPolicy",
    "PolicyCache",
    "Principal",
    "compile_policy",
    "scope_key",
    "visibility_filter",
    "visible",
]
