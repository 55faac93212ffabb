"""The bench's own principal: a member of one organisation, project and role."""

from __future__ import annotations

from trilha.access import Principal

#: Its compiled visibility rule is what ``hybrid_weighted_visibility`` runs inside both indices
#: (as an explicit filter, so the dense side runs it even on a corpus every principal sees
#: whole); the ``orchestrated`` rows ask as this user when the workspace has no principals.
BENCH_PRINCIPAL = Principal(
    user_id="bench-user",
    org_ids=["bench-org"],
    project_ids=["bench-project"],
    roles=["bench-role"],
    hierarchy_level=1,
    clearance=1,
)
