"""The compiled policy: built once per principal, never handed to another, fresh per snapshot."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from qdrant_client import models

from trilha.access import PolicyCache, Principal, compile_policy, scope_key, visibility_filter
from trilha.access.compiled import POLICIES
from trilha.access.cypher import CypherVisibility
from trilha.graph.support import entry_value
from trilha.graph.visibility import Visibility
from trilha.index.columns import MetaColumns
from trilha.index.filters import Condition, FilterExpr, combine, sealed
from trilha.index.qdrant_schema import FilterCompiler
from trilha.types import OPEN_ACL

ANA = Principal(user_id="ana", org_ids=["acme"], roles=["it"], hierarchy_level=2, clearance=1)
BIA = Principal(user_id="bia", org_ids=["beta"], project_ids=["atlas"], clearance=2)
CAIO = Principal(user_id="caio", roles=["board"], hierarchy_level=5)
#: Rows: public; acme org; private to ana; beta project atlas; restricted to board.
ROWS = [
    {"visibility": "public"},
    {"visibility": "org", "org_id": "acme"},
    {"visibility": "private", "owner_id": "ana"},
    {"visibility": "project", "project_id": "atlas", "sensitivity": 2},
    {"visibility": "restricted", "acl": ["board"]},
]
LANG = FilterExpr(parts=[Condition(key="lang", op="eq", value="pt")])


def columns(rows: list[dict[str, object]]) -> MetaColumns:
    """Payloads as the unit store writes them: every access field present."""
    base = {"sensitivity": 0, "hierarchy_level": 0, "acl": [OPEN_ACL], "lang": "pt"}
    return MetaColumns([{**base, **row} for row in rows])


def test_compile_policy_holds_every_form_of_the_rule() -> None:
    policy = compile_policy(ANA)
    assert policy.scope_key == scope_key(ANA)
    assert policy.expr.cache_key() == visibility_filter(ANA).cache_key()
    assert policy.expr.content_key is not None
    assert policy.cypher == CypherVisibility.of(ANA)
    cols = columns(ROWS)
    mask = policy.row_mask(cols)
    assert mask is not None and mask.tolist() == [True, True, True, False, False]
    assert not policy.sees_all(cols)


def test_the_cache_never_gives_one_principal_anothers_policy() -> None:
    cache = PolicyCache(size=2)  # three principals through two slots: entries get evicted
    assert len({scope_key(p) for p in (ANA, BIA, CAIO)}) == 3
    for i in range(30):
        for who in (ANA, BIA, CAIO)[i % 3 :] + (ANA, BIA, CAIO)[: i % 3]:
            policy = cache.get(who)
            assert policy.principal == who
            assert policy.scope_key == scope_key(who)
            assert policy.expr.cache_key() == visibility_filter(who).cache_key()
    assert len(cache) == 2


def test_a_principal_is_compiled_once_and_a_changed_one_afresh() -> None:
    cache = PolicyCache()
    first = cache.get(ANA)
    assert cache.get(Principal(**ANA.model_dump())) is first  # equal fields: the same policy
    promoted = ANA.model_copy(update={"roles": ["it", "board"]})
    fresh = cache.get(promoted)
    assert fresh is not first and fresh.scope_key == scope_key(promoted) != first.scope_key
    cols = columns(ROWS)
    mask = fresh.row_mask(cols)
    assert mask is not None and mask.tolist() == [True, True, True, False, True]
    assert cache.get(ANA) is first  # the old fields still name the old policy


def test_the_cache_is_safe_between_threads() -> None:
    cache = PolicyCache(size=3)
    people = [Principal(user_id=f"u{i}", clearance=i % 4) for i in range(12)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(cache.get, people * 20))
    assert all(p.principal == who for p, who in zip(got, people * 20, strict=True))


def test_the_row_mask_is_kept_per_snapshot_and_anded_with_filters() -> None:
    policy = compile_policy(BIA)
    old = columns(ROWS)
    assert policy.row_mask(old) is policy.row_mask(old)  # computed once for this snapshot
    new = columns([*ROWS, {"visibility": "org", "org_id": "beta", "lang": "en"}])
    mask = policy.row_mask(new)
    assert mask is not None and mask.tolist() == [True, False, False, True, False, True]
    with_filter = policy.row_mask(new, LANG)
    expected = new.mask(combine(visibility_filter(BIA), LANG))
    assert with_filter is not None and expected is not None
    assert np.array_equal(with_filter, expected) and with_filter.tolist()[-1] is False
    everyone_public = columns([{"visibility": "public"}] * 3)
    assert policy.sees_all(everyone_public) and not policy.sees_all(new)
    # a principal who sees every row has no mask to apply: BM25 reads the postings as stored
    assert policy.row_mask(everyone_public) is None
    only_pt = policy.row_mask(everyone_public, LANG)
    assert only_pt is not None and only_pt.tolist() == [True] * 3


def test_a_sealed_expression_is_compiled_once_per_backend() -> None:
    compiler = FilterCompiler(models)
    rule = sealed(visibility_filter(ANA))
    native = compiler.compile(rule)
    assert compiler.compile(rule) is native
    combined = compiler.compile(combine(rule, LANG))
    assert combined.must[0] is native  # reused inside a larger filter
    plain = visibility_filter(ANA)  # not sealed: built each time, to the same filter
    assert compiler.compile(plain) is not native and compiler.compile(plain) == native


def test_graph_reads_share_one_compiled_policy_per_principal() -> None:
    first, again = Visibility.of(ANA), Visibility.of(ANA.model_copy())
    assert first.compiled is again.compiled and first.entry is again.entry
    assert first.compiled is POLICIES.get(ANA).cypher
    assert first.compiled.params == CypherVisibility.of(ANA).params
    assert first.entry.template == CypherVisibility.of(ANA, access=entry_value).template
    other = Visibility.of(BIA)
    assert other.compiled is not first.compiled
    assert other.compiled.params == CypherVisibility.of(BIA).params
