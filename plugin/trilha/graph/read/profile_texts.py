"""The nodes of a label whose text contains one of a walk's terms, from a folded copy of every
node's text kept per graph generation (:class:`~trilha.graph.read.profile_memo.GraphMemo`).

The anchor scan's terms filter folds the title, name and text of every node of a label in
Cypher (:func:`~trilha.graph.read.profile_statements.folded`: one ``replace`` per accented
letter), which is most of a walk's time on a corpus of thousands of documents. The texts here
are the ones that filter folds: lower-cased by the store (``toLower``, as the filter does), then
folded with the same table in Python (:func:`~trilha.graph.read.profile_query.fold`'s
``translate`` replaces each accented letter by its base letter, as the chain of ``replace``
calls does). So :meth:`AnchorTexts.candidates` returns the nodes the terms filter passes (a
NUL inside a text, read as a space, can only add some), and the scan runs on those ids only,
every filter (visibility and terms too) still in its statement: the texts narrow the scan,
they never widen what a caller sees, and they hold nothing of any principal.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from trilha.graph.model import check_label
from trilha.graph.read.profile_memo import GraphMemo, memo_key
from trilha.graph.read.profile_query import fold
from trilha.graph.read.profile_statements import text_of
from trilha.graph.stores.base import GraphStore

#: Between two texts: terms never hold it (NUL is refused in terms).
_SEP = "\x00"


def texts_statement(label: str) -> str:
    """Every ``label`` node's id and lower-cased text (title, name and text, as the terms
    filter reads them)."""
    return f"MATCH (n:{check_label(label)}) RETURN n.id AS id, toLower({text_of('n')}) AS txt"


@dataclass(frozen=True)
class LabelTexts:
    """The folded texts of one label's nodes, joined by NUL, with where each starts; None
    ``ids`` when a node has no string id (then the scan cannot be narrowed by id)."""

    ids: tuple[str, ...] | None
    joined: str
    starts: tuple[int, ...]

    @classmethod
    def of(cls, rows: Sequence[dict[str, object]]) -> LabelTexts:
        """From :func:`texts_statement`'s rows."""
        texts = [fold(str(r["txt"] or "")).replace(_SEP, " ") for r in rows]
        starts, at = [], 0
        for text in texts:
            starts.append(at)
            at += len(text) + 1
        ids = [r["id"] for r in rows]
        plain = all(isinstance(i, str) for i in ids)
        return cls(tuple(map(str, ids)) if plain else None, _SEP.join(texts), tuple(starts))

    def matching(self, terms: Sequence[str]) -> list[str]:
        """Distinct ids of the nodes whose text contains one of ``terms`` (folded), in node
        order."""
        assert self.ids is not None
        wanted = [t for t in terms if t]
        if not wanted or not self.ids:
            return []
        pattern = re.compile("|".join(re.escape(t) for t in wanted))
        found: dict[str, None] = {}
        at = 0
        while (match := pattern.search(self.joined, at)) is not None:
            node = bisect_right(self.starts, match.start()) - 1
            found[self.ids[node]] = None
            at = self.joined.find(_SEP, match.end())  # on to the next node's text
            if at < 0:
                break
        return list(found)


class AnchorTexts:
    """Folded node texts per label, read once per graph generation (module docstring)."""

    def __init__(self, memo: GraphMemo[LabelTexts]) -> None:
        self.memo = memo

    def candidates(
        self, store: GraphStore, label: str, terms: Sequence[str], timeout_s: float | None = None
    ) -> list[str] | None:
        """Ids of the ``label`` nodes whose folded text contains one of ``terms`` (folded as
        the filter's ``$f_terms``); None when the label has a node without a string id."""
        statement = texts_statement(label)
        texts = self.memo.get(
            memo_key(store.name, statement),
            lambda: LabelTexts.of(store.run(statement, {}, timeout_s=timeout_s)),
        )
        return None if texts.ids is None else texts.matching(terms)
