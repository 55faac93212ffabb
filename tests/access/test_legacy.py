"""A workspace stored before the visibility rules opens, its odd units made owner-only."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from trilha.access import Principal
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace


def test_legacy_units_become_private_and_payloads_are_rewritten(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    settings = TrilhaSettings(graph_backend="none")
    docs = [
        SourceDocument(doc_id=d, text=f"{d} vpn policy text", source_type="text")
        for d in ("old", "fine")
    ]
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(docs)
    db = sqlite3.connect(tmp_path / "ws" / "units.sqlite")
    (body,) = db.execute("SELECT body FROM units WHERE doc_id='old'").fetchone()
    legacy = dict(json.loads(body), visibility="org", owner_id="org-acme")  # no org_id: old style
    db.execute("UPDATE units SET body=? WHERE doc_id='old'", (json.dumps(legacy),))
    db.execute("DELETE FROM meta WHERE key='access'")
    db.commit()
    db.close()
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        (old,) = ws.store.units_of(["old"])
        assert (old.visibility, old.owner_id) == ("private", "org-acme")
        assert [h.unit.doc_id for h in ws.search("vpn policy").hits] == ["fine"]
        owner = ws.search("vpn policy", principal=Principal(user_id="org-acme")).hits
        assert {h.unit.doc_id for h in owner} == {"old", "fine"}
        dense_only = ws.search("vpn policy", sides=("semantic",)).hits  # payloads rewritten
        assert [h.unit.doc_id for h in dense_only] == ["fine"]
