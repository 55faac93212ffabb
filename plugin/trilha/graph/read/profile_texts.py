"""The nodes of a label whose text contains one of a walk's terms, and their anchor props, from
a copy of every node of the label kept per graph generation
(:class:`~trilha.graph.read.profile_memo.GraphMemo`).

The anchor scan's terms filter folds the title, name and text of every node of a label in Cypher
(:func:`~trilha.graph.read.profile_statements.folded`: one ``replace`` per accented letter),
and the scan returns the props of every match, up to half of ``max_nodes_scanned``: most of a
walk's time on a corpus of thousands of documents. The texts here are the ones that filter
folds: lower-cased by the store (``toLower``, as the filter does), then folded with the same
table in Python (``str.translate`` replaces each accented letter by its base letter, as the
chain of ``replace`` calls does), so :meth:`AnchorTexts.candidates` names exactly the nodes the
terms filter passes. The scan then asks the store which of those ids pass the caller's
visibility and the other filters (:func:`~trilha.graph.read.profile_statements.anchor_ids`) and
takes their props from here. Nothing here belongs to a principal: every id used has passed
the caller's visibility in the store, at the time of the call.

A label is not narrowed (:meth:`AnchorTexts.candidates` is None) when a node has no string id,
two share one, a text holds a NUL, it has more than :data:`MAX_NODES` nodes, or the memory
mirrors write it (:data:`UNCOUNTED`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trilha.graph.model import check_label
from trilha.graph.read.profile_memo import GraphMemo, memo_key
from trilha.graph.read.profile_query import fold
from trilha.graph.read.profile_statements import ANCHOR_PROPS, text_of
from trilha.graph.stores.base import GraphStore

#: Labels the memory mirrors write straight into the store, without a new generation.
UNCOUNTED = frozenset({"Memory", "RetrievalJob"})
#: Largest label kept in memory.
MAX_NODES = 200_000
#: Between two texts (never in a term: terms refuse NUL).
_SEP = "\x00"


def texts_statement(label: str) -> str:
    """Every ``label`` node's anchor props (:data:`ANCHOR_PROPS`) and lower-cased text (title,
    name and text, as the terms filter reads them), at most :data:`MAX_NODES` + 1."""
    props = ", ".join(f"{k}: n.{k}" for k in ANCHOR_PROPS)
    return (
        f"MATCH (n:{check_label(label)}) RETURN {{{props}}} AS props, "
        f"toLower({text_of('n')}) AS txt LIMIT {MAX_NODES + 1}"
    )


@dataclass(frozen=True)
class Candidates:
    """The ids whose text holds a term, in node order, and every node's props by id."""

    ids: list[str]
    props: Mapping[str, dict[str, Any]]


@dataclass(frozen=True)
class LabelTexts:
    """One label's folded texts joined by NUL, where each starts, and the nodes' props (none
    when the label cannot be narrowed: module docstring)."""

    ids: tuple[str, ...] = ()
    joined: str = ""
    starts: tuple[int, ...] = ()
    props: dict[str, dict[str, Any]] = field(default_factory=dict)
    usable: bool = False

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> LabelTexts:
        """From :func:`texts_statement`'s rows."""
        ids = [r["props"].get("id") for r in rows]
        texts = [fold(str(r["txt"] or "")) for r in rows]
        plain = all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)
        if not plain or len(rows) > MAX_NODES or any(_SEP in t for t in texts):
            return cls()
        starts, at = [], 0
        for text in texts:
            starts.append(at)
            at += len(text) + 1
        props = {str(r["props"]["id"]): present(r["props"]) for r in rows}
        return cls(tuple(map(str, ids)), _SEP.join(texts), tuple(starts), props, usable=True)

    def matching(self, terms: Sequence[str]) -> list[str]:
        """Ids of the nodes whose text contains one of ``terms`` (folded), in node order."""
        hits: set[int] = set()
        for term in dict.fromkeys(t for t in terms if t):
            at = self.joined.find(term)
            while at >= 0:
                node = bisect_right(self.starts, at) - 1
                hits.add(node)
                if node + 1 == len(self.starts):
                    break
                at = self.joined.find(term, self.starts[node + 1])  # on to the next text
        return [self.ids[node] for node in sorted(hits)]


def present(props: Mapping[str, Any]) -> dict[str, Any]:
    """``props`` without the keys whose value is None (properties the node lacks)."""
    return {k: v for k, v in props.items() if v is not None}


class AnchorTexts:
    """Folded node texts and anchor props per label, read once per graph generation (module
    docstring)."""

    def __init__(self, memo: GraphMemo[LabelTexts]) -> None:
        self.memo = memo

    def candidates(
        self, store: GraphStore, label: str, terms: Sequence[str], timeout_s: float | None = None
    ) -> Candidates | None:
        """The ``label`` nodes whose folded text contains one of ``terms`` (folded as the
        filter's ``$f_terms``); None when the label cannot be narrowed."""
        if label in UNCOUNTED:
            return None
        statement = texts_statement(label)
        texts = self.memo.get(
            memo_key(store.name, statement),
            lambda: LabelTexts.of(store.run(statement, {}, timeout_s=timeout_s)),
        )
        return Candidates(texts.matching(terms), texts.props) if texts.usable else None
