"""Do the three indices hold the same units? The id sets compared, and what differs.

The unit store is the truth; the dense index and the graph derive from it. A unit id in a derived
index that the store lacks is an *orphan* (to remove); a store id a derived index lacks is
*missing* (to restore). ``trilha doctor`` prints this report; :meth:`Workspace.repair` acts on it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class IndexDiff(BaseModel):
    """How one derived index differs from the unit store."""

    count: int = Field(description="Unit ids the index holds.")
    orphans: list[str] = Field(default_factory=list, description="Ids the store lacks.")
    missing: list[str] = Field(default_factory=list, description="Store ids it lacks.")

    @classmethod
    def of(cls, truth: set[str], held: set[str]) -> IndexDiff:
        """Compare an index's ids with the store's."""
        return cls(count=len(held), orphans=sorted(held - truth), missing=sorted(truth - held))

    @property
    def equal(self) -> bool:
        """True when the index holds exactly the store's ids."""
        return not self.orphans and not self.missing


class Consistency(BaseModel):
    """The id sets of a workspace's three indices, compared."""

    units: int = Field(description="Units in the unit store (the truth).")
    dense: IndexDiff = Field(description="The dense index against the store.")
    graph: IndexDiff | None = Field(
        None, description="Graph chunks; None without a graph or when it could not be read."
    )
    graph_error: str | None = Field(None, description="Why the graph was not compared.")
    pending: list[str] = Field(
        default_factory=list, description="Documents whose last write was interrupted."
    )
    pending_records: list[str] = Field(
        default_factory=list,
        description="Graph records files whose ingest was interrupted ('FILE (N records)').",
    )

    @property
    def consistent(self) -> bool:
        """True when every index holds exactly the store's ids and nothing is pending."""
        graph_ok = self.graph is None or self.graph.equal
        return self.dense.equal and graph_ok and not self.pending and not self.pending_records

    def lines(self, show: int = 20) -> list[str]:
        """A human-readable report: counts, then the ids that differ (at most ``show`` each)."""
        out = [f"unit store: {self.units} units"]
        for name, diff in (("dense index", self.dense), ("graph", self.graph)):
            if diff is None:
                out.append(f"{name}: {self.graph_error or 'none'}")
                continue
            out.append(
                f"{name}: {diff.count} units, {len(diff.orphans)} orphans, "
                f"{len(diff.missing)} missing"
            )
            for label, ids in (("orphan", diff.orphans), ("missing", diff.missing)):
                out.extend(f"  {label} {uid}" for uid in ids[:show])
                if len(ids) > show:
                    out.append(f"  … and {len(ids) - show} more {label}s")
        if self.pending:
            out.append(f"interrupted writes: {', '.join(self.pending)}")
        out.extend(f"interrupted records ingest: {what}" for what in self.pending_records)
        out.append("consistent" if self.consistent else "NOT consistent: run with --repair")
        return out
