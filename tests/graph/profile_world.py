"""A small organisation for the profile-walk tests: two orgs, users, projects, tasks, aims,
claims and priority items, with the access fields of every node kept for an oracle.

Today is 2026-02-01. Ana (acme, level 2) is the usual caller. What she must never see: Bruno's
private task, the level-3 board task and OKR, everything of org beta but its public task, and
Bruno's private claim. ``t-private`` sits between ``t-dpia`` and ``t-deep`` on a DEPENDS_ON
chain, so ``t-deep`` is reachable from ``t-dpia`` only through a node Ana may not see.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from trilha.access import Access, Principal
from trilha.graph.build.records import EdgeRecord, NodeRecord
from trilha.graph.build.writer import GraphWriter
from trilha.graph.stores.base import GraphStore

TODAY = date(2026, 2, 1)
NOW = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
ANA = Principal(user_id="u-ana", org_ids=["acme"], hierarchy_level=2)

ACME = {"visibility": "org", "org_id": "acme"}
BETA = {"visibility": "org", "org_id": "beta"}

NODES: list[tuple[str, str, dict[str, Any]]] = [
    ("Org", "org-acme", {"name": "Acme Ltda", **ACME}),
    ("Org", "org-beta", {"name": "Beta SA", **BETA}),
    ("User", "u-ana", {"name": "Ana Souza", "hierarchy_level": 2, **ACME}),
    ("User", "u-bruno", {"name": "Bruno Lima", "hierarchy_level": 1, **ACME}),
    ("User", "u-carla", {"name": "Carla Dias", "hierarchy_level": 1, **BETA}),
    (
        "Project",
        "p-lgpd",
        {
            "title": "Adequação à LGPD",
            "status": "active",
            "owner_id": "u-ana",
            "hierarchy_level": 1,
            "priority_node": True,
            **ACME,
        },
    ),
    (
        "Project",
        "p-board",
        {"title": "Board restructuring", "status": "active", "hierarchy_level": 3, **ACME},
    ),
    ("Project", "p-beta", {"title": "Beta launch", "status": "active", **BETA}),
    (
        "Task",
        "t-ropa",
        {
            "title": "Atualizar o registro de operações",
            "status": "late",
            "owner_id": "u-bruno",
            "due_date": "2026-01-10",
            "hierarchy_level": 1,
            "updated_at": "2026-01-30T10:00:00Z",
            **ACME,
        },
    ),
    (
        "Task",
        "t-dpia",
        {
            "title": "Relatório de impacto (RIPD) do CRM",
            "status": "open",
            "owner_id": "u-ana",
            "due_date": "2026-01-25",
            "hierarchy_level": 2,
            "updated_at": "2026-01-20T10:00:00Z",
            **ACME,
        },
    ),
    (
        "Task",
        "t-done",
        {
            "title": "Mapear dados pessoais",
            "status": "concluída",
            "due_date": "2026-01-05",
            "priority": "high",
            **ACME,
        },
    ),
    (
        "Task",
        "t-soon",
        {
            "title": "Treinar a equipe em LGPD",
            "status": "open",
            "due_date": "2026-02-05",
            "priority": "alta",
            **ACME,
        },
    ),
    (
        "Task",
        "t-far",
        {"title": "Auditoria anual", "status": "open", "due_date": "2026-06-01", **ACME},
    ),
    (
        "Task",
        "t-private",
        {
            "title": "Bruno's private LGPD note",
            "status": "late",
            "visibility": "private",
            "owner_id": "u-bruno",
            "org_id": "acme",
            "due_date": "2026-01-02",
            "priority_node": True,
        },
    ),
    ("Task", "t-deep", {"title": "Deep prerequisite", "status": "open", **ACME}),
    (
        "Task",
        "t-board",
        {
            "title": "Board minutes",
            "status": "late",
            "hierarchy_level": 3,
            "due_date": "2026-01-03",
            **ACME,
        },
    ),
    (
        "Task",
        "t-beta",
        {"title": "Beta pricing", "status": "late", "due_date": "2026-01-03", **BETA},
    ),
    (
        "Task",
        "t-beta-pub",
        {
            "title": "Beta public roadmap",
            "status": "late",
            "visibility": "public",
            "org_id": "beta",
            "due_date": "2026-01-03",
        },
    ),
    (
        "Process",
        "proc-onb",
        {"title": "Onboarding", "status": "active", "priority_node": True, **ACME},
    ),
    (
        "OKR",
        "okr-2026",
        {
            "title": "Zero incidentes de privacidade em 2026",
            "status": "active",
            "valid_from": "2026-01-01",
            "valid_to": "2026-12-31",
            **ACME,
        },
    ),
    (
        "OKR",
        "okr-2025",
        {
            "title": "Privacidade 2025",
            "status": "active",
            "priority_node": True,
            "valid_from": "2025-01-01",
            "valid_to": "2025-12-31",
            **ACME,
        },
    ),
    (
        "OKR",
        "okr-secret",
        {"title": "Secret board OKR", "hierarchy_level": 3, "valid_from": "2026-01-01", **ACME},
    ),
    (
        "StrategicObjective",
        "so-privacy",
        {"title": "Privacy by design", "valid_from": "2025-06-01", **ACME},
    ),
    ("Purpose", "pur-trust", {"title": "Earn trust", "visibility": "public"}),
    (
        "Claim",
        "c-ropa",
        {
            "text": "A LGPD exige o registro das operações de tratamento.",
            "confidence": 0.9,
            "source_ref": "lgpd#art37",
            "created_at": "2026-01-10T00:00:00Z",
            **ACME,
        },
    ),
    (
        "Claim",
        "c-low",
        {
            "text": "A LGPD talvez se aplique a dados anonimizados.",
            "confidence": 0.3,
            "source_ref": "forum#12",
            "created_at": "2026-01-12T00:00:00Z",
            "visibility": "public",
        },
    ),
    (
        "Claim",
        "c-hidden",
        {
            "text": "LGPD fine estimate for Bruno",
            "confidence": 1.0,
            "visibility": "private",
            "owner_id": "u-bruno",
        },
    ),
    (
        "Claim",
        "c-expired",
        {
            "text": "Prazo da LGPD prorrogado",
            "confidence": 1.0,
            "expires_at": "2026-01-15T00:00:00Z",
            **ACME,
        },
    ),
    (
        "Claim",
        "c-later",
        {"text": "Nova regra da LGPD", "confidence": 1.0, "valid_from": "2026-03-01", **ACME},
    ),
    (
        "Claim",
        "c-quote",
        {"text": 'It\'s a `tick` and "quote" claim', "confidence": 0.8, "visibility": "public"},
    ),
]

EDGES: list[tuple[str, str, str]] = [
    ("MEMBER_OF", "User:u-ana", "Org:org-acme"),
    ("MEMBER_OF", "User:u-bruno", "Org:org-acme"),
    ("MEMBER_OF", "User:u-carla", "Org:org-beta"),
    ("BELONGS_TO", "Project:p-lgpd", "Org:org-acme"),
    ("BELONGS_TO", "Project:p-board", "Org:org-acme"),
    ("BELONGS_TO", "Project:p-beta", "Org:org-beta"),
    ("BELONGS_TO", "Task:t-ropa", "Project:p-lgpd"),
    ("BELONGS_TO", "Task:t-dpia", "Project:p-lgpd"),
    ("BELONGS_TO", "Task:t-done", "Project:p-lgpd"),
    ("BELONGS_TO", "Task:t-soon", "Project:p-lgpd"),
    ("BELONGS_TO", "Task:t-far", "Project:p-lgpd"),
    ("BELONGS_TO", "Task:t-private", "Project:p-lgpd"),
    ("BELONGS_TO", "Task:t-board", "Project:p-board"),
    ("BELONGS_TO", "Task:t-beta", "Project:p-beta"),
    ("BELONGS_TO", "Task:t-beta-pub", "Project:p-beta"),
    ("ASSIGNED_TO", "Task:t-ropa", "User:u-bruno"),
    ("ASSIGNED_TO", "Task:t-dpia", "User:u-ana"),
    ("DEPENDS_ON", "Task:t-dpia", "Task:t-ropa"),
    ("DEPENDS_ON", "Task:t-dpia", "Task:t-private"),
    ("DEPENDS_ON", "Task:t-private", "Task:t-deep"),
    ("REFERENCES", "Task:t-ropa", "Entity:LGPD"),
    ("ALIGNS_WITH", "Task:t-dpia", "OKR:okr-2026"),
    ("ALIGNS_WITH", "Project:p-lgpd", "OKR:okr-2026"),
    ("ALIGNS_WITH", "Task:t-board", "OKR:okr-2026"),
    ("ALIGNS_WITH", "Task:t-ropa", "OKR:okr-2025"),
    ("ALIGNS_WITH", "OKR:okr-2026", "StrategicObjective:so-privacy"),
    ("ALIGNS_WITH", "OKR:okr-2025", "StrategicObjective:so-privacy"),
    ("ALIGNS_WITH", "StrategicObjective:so-privacy", "Purpose:pur-trust"),
    ("MENTIONS", "Claim:c-ropa", "Entity:LGPD"),
    ("MENTIONS", "Claim:c-hidden", "Entity:LGPD"),
]


def records() -> list[NodeRecord | EdgeRecord]:
    """The world as graph records (the Entity comes as a node record without access fields)."""
    out: list[NodeRecord | EdgeRecord] = [
        NodeRecord(label=label, id=key, props=props) for label, key, props in NODES
    ]
    out.append(NodeRecord(label="Entity", id="LGPD", props={"name": "LGPD"}))
    out += [EdgeRecord(type=t, source=s, target=e) for t, s, e in EDGES]
    return out


def write(store: GraphStore) -> None:
    """Write the world into ``store``, one row per statement: ArcadeDB (26.x, Bolt) refuses
    one UNWIND statement that MERGEs two edges into the same vertex ("Edge list IN head chunk
    ... not visible yet (concurrent commit in flight)"), and many tasks BELONG_TO one project."""
    GraphWriter(store, batch_size=1).write_records(records())


def access(display: str) -> Access | None:
    """The access fields of an own node of the world (None for the shared Entity)."""
    label, _, key = display.partition(":")
    for node_label, node_key, props in NODES:
        if (node_label, node_key) == (label, key):
            return Access.model_validate(
                {k: v for k, v in props.items() if k in Access.model_fields}
            )
    return None


def props_of(display: str) -> dict[str, Any]:
    """The props a node of the world was written with."""
    label, _, key = display.partition(":")
    return next(p for node_label, k, p in NODES if (node_label, k) == (label, key))
