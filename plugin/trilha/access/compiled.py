"""A principal's visibility rule compiled once into each native form, and a cache of them.

:func:`compile_policy` runs :func:`~trilha.access.policy.visibility_filter` once for a
principal and keeps every form the indices need:

* :attr:`CompiledPolicy.expr`, the rule as a :func:`~trilha.index.filters.sealed` filter: each
  dense backend compiles it into its Qdrant filter once and reuses it in every search, alone
  or ANDed with the caller's filters;
* the lexical row mask (:meth:`CompiledPolicy.row_mask`), computed once per lexical snapshot
  and dropped with it;
* :attr:`CompiledPolicy.cypher`, the WHERE fragment of graph reads over node properties, and
  :meth:`CompiledPolicy.cypher_for` the same rule over any other :data:`~trilha.access.cypher.
  Accessor` (the graph's access summaries), each compiled once;
* :attr:`CompiledPolicy.scope_key`, the key of caches that depend on who asks.

:class:`PolicyCache` keeps the compiled policies of the principals seen last. Its key is the
principal's fields, from which the policy (and its scope key) follows: principals that differ
in any field never share an entry, and a principal whose fields change is compiled afresh.
:data:`POLICIES` is the process-wide cache every search and graph read shares.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from trilha.access.cypher import Accessor, CypherVisibility
from trilha.access.policy import scope_key, visibility_filter
from trilha.access.principal import Principal
from trilha.index.columns import BoolArray, MetaColumns
from trilha.index.filters import FilterExpr, sealed


@dataclass(frozen=True)
class _SnapshotMask:
    """The rows of one lexical snapshot the principal may see (None: all of them), and whether
    that is all."""

    mask: BoolArray | None
    sees_all: bool


@dataclass(frozen=True, eq=False)
class CompiledPolicy:
    """One principal's visibility rule in every native form (see the module docstring)."""

    principal: Principal
    scope_key: str
    expr: FilterExpr
    cypher: CypherVisibility
    _masks: WeakKeyDictionary[MetaColumns, _SnapshotMask] = field(
        default_factory=WeakKeyDictionary, init=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _cyphers: dict[Accessor, CypherVisibility] = field(default_factory=dict, init=False, repr=False)

    def cypher_for(self, access: Accessor) -> CypherVisibility:
        """The rule in Cypher over ``access`` (how each access key is read), compiled once."""
        with self._lock:
            known = self._cyphers.get(access)
        if known is None:
            known = CypherVisibility.of(self.principal, access=access)
            with self._lock:
                self._cyphers[access] = known
        return known

    def _snapshot(self, columns: MetaColumns) -> _SnapshotMask:
        with self._lock:
            known = self._masks.get(columns)
        if known is None:
            mask = columns.mask(self.expr)
            sees_all = columns.keeps_all(mask)  # then no mask: BM25 reads the postings as stored
            known = _SnapshotMask(None if sees_all else mask, sees_all)
            with self._lock:
                self._masks[columns] = known
        return known

    def row_mask(self, columns: MetaColumns, filters: FilterExpr | None = None) -> BoolArray | None:
        """The rows of ``columns`` (one lexical snapshot) the principal may see and that match
        ``filters``; None when nothing is excluded (a principal who sees every row has no mask
        of their own: their rows' statistics and postings are those of the whole snapshot)."""
        own = self._snapshot(columns).mask
        extra = None if filters is None else columns.mask(filters)
        if own is None or extra is None:
            return extra if own is None else own
        return own & extra

    def sees_all(self, columns: MetaColumns) -> bool:
        """True when the principal may see every row of ``columns``."""
        return self._snapshot(columns).sees_all


def compile_policy(principal: Principal) -> CompiledPolicy:
    """Compile ``principal``'s visibility rule into every native form."""
    return CompiledPolicy(
        principal=principal,
        scope_key=scope_key(principal),
        expr=sealed(visibility_filter(principal)),
        cypher=CypherVisibility.of(principal),
    )


def principal_key(principal: Principal) -> tuple[Any, ...]:
    """Every field of ``principal`` as a hashable tuple (lists as tuples)."""
    return tuple(
        (name, tuple(v) if isinstance(v, list) else v)
        for name, v in ((n, getattr(principal, n)) for n in type(principal).model_fields)
    )


class PolicyCache:
    """The compiled policies of the last ``size`` principals seen (least recently used first
    out); safe to share between threads."""

    def __init__(self, size: int = 128) -> None:
        if size <= 0:
            raise ValueError("a policy cache holds at least one policy")
        self._size = size
        self._policies: OrderedDict[tuple[Any, ...], CompiledPolicy] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._policies)

    def get(self, principal: Principal) -> CompiledPolicy:
        """The compiled policy of ``principal``, compiled now if it is not cached."""
        key = principal_key(principal)
        with self._lock:
            policy = self._policies.get(key)
            if policy is not None:
                self._policies.move_to_end(key)
                return policy
        policy = compile_policy(principal)
        with self._lock:
            self._policies[key] = policy
            if len(self._policies) > self._size:
                self._policies.popitem(last=False)
        return policy


#: The process-wide policy cache (searches, graph reads, the graph's caches and its boost).
POLICIES = PolicyCache()
