"""Named graph nodes a question mentions, among those the caller may see (REQ-RETR-002's
``focus_entities``; REQ-RETR-011: a hidden node is never named back).

* **Named labels** (Entity, Category, Tag, Criterio: the id is the normalised name) are looked
  up by the question's word n-grams on the id index, and kept only when a node the principal
  sees by its own fields links to them (:mod:`trilha.graph.visibility`: shared nodes belong to
  what links to them).
* **Titled labels** (Project, Task, OKR, User, Org...) are read with the principal's rule in the
  statement, so only visible titles ever leave the store, and matched against the question as
  whole words, case and accents aside.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from trilha.access import Principal
from trilha.graph.model import NODE_SPECS, check_label, display_id, normalise_name
from trilha.graph.read.cache import GraphMemo, memo_key
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility
from trilha.orchestrate.prequery.model import FocusEntity
from trilha.orchestrate.prequery.text import fold, words

#: Shared labels whose names a question may mention.
NAMED_LABELS = ("Entity", "Criterio", "Category", "Tag")
#: Own labels whose title (or name) a question may mention.
TITLED_LABELS = (
    "Project",
    "Task",
    "Process",
    "OKR",
    "StrategicObjective",
    "Purpose",
    "User",
    "Org",
    "Department",
)
#: Longest name, in words, looked up by n-gram.
MAX_NGRAM = 6
#: Shortest title (in characters) matched in a question: shorter ones match by accident.
MIN_TITLE = 3


@runtime_checkable
class EntityFinder(Protocol):
    """Finds the named things a question mentions."""

    def find(self, text: str) -> list[FocusEntity]:
        """The focus entities of ``text``, each with its ``name`` and ``node_id``."""
        ...


def named_lookup(label: str, vis: Visibility) -> str:
    """Nodes of shared ``label`` whose id is in ``$keys`` and that a visible own node links to
    (``WITH n`` anchors the walk on the id index)."""
    return (
        f"UNWIND $keys AS k MATCH (n:{check_label(label)} {{id: k}}) WITH n "
        "MATCH (n)-[r]-(o) WHERE type(r) <> 'RELATED' AND NOT labels(o)[0] IN $vis_shared "
        f"AND {vis.own('o')} WITH DISTINCT n RETURN n.id AS id, n.name AS name"
    )


def titled_nodes(label: str, vis: Visibility) -> str:
    """Every node of own ``label`` the principal sees, with its caption (title or name)."""
    caption = NODE_SPECS[check_label(label)].caption
    return (
        f"MATCH (n:{label}) WHERE n.{caption} IS NOT NULL AND {vis.own('n')} "
        f"RETURN n.id AS id, n.{caption} AS name"
    )


def ngrams(question: str, longest: int = MAX_NGRAM) -> list[str]:
    """The question's word n-grams (1 to ``longest`` words) as normalised names."""
    found = words(question)
    grams = {
        normalise_name(" ".join(found[i : i + n]))
        for n in range(1, longest + 1)
        for i in range(len(found) - n + 1)
    }
    return sorted(grams)


class GraphEntityFinder:
    """Finds mentioned graph nodes that ``principal`` (None: anonymous) may see."""

    def __init__(
        self,
        store: GraphStore,
        principal: Principal | None,
        *,
        timeout_s: float | None = None,
        names: GraphMemo[list[dict[str, Any]]] | None = None,
    ) -> None:
        self.store = store
        self.visibility = Visibility.of(principal)
        self.timeout_s = timeout_s
        self.names = names

    def find(self, text: str) -> list[FocusEntity]:
        """Named and titled nodes mentioned in ``text``, in the order they appear."""
        folded = fold(text)
        unique = {e.node_id: e for e in [*self._named(text), *self._titled(folded)]}
        return sorted(unique.values(), key=lambda e: folded.find(f" {_folded(e.name or '')} "))

    def _run(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        return self.store.run(
            statement, {**self.visibility.params, **params}, timeout_s=self.timeout_s
        )

    def _named(self, question: str) -> list[FocusEntity]:
        keys = ngrams(question)
        if not keys:
            return []
        return [
            _entity(label, {"id": r["id"], "name": r["name"] or r["id"]})
            for label in NAMED_LABELS
            if self._has(label)
            for r in self._run(named_lookup(label, self.visibility), keys=keys)
        ]

    def _has(self, label: str) -> bool:
        """Whether the graph has a ``label`` node (asked once per generation with ``names``;
        without, assumed: the lookup finds nothing then)."""
        if self.names is None:
            return True
        statement = f"MATCH (n:{check_label(label)}) RETURN n.id AS id LIMIT 1"
        return bool(
            self.names.get(memo_key(self.store.name, statement), lambda: self._run(statement))
        )

    def _titles(self, label: str) -> list[dict[str, Any]]:
        """The visible ``label`` nodes' ids and captions; from ``names`` when given, keyed by
        the statement and the visibility parameters (one principal's titles never serve
        another whose visibility differs)."""
        statement = titled_nodes(label, self.visibility)
        if self.names is None:
            return self._run(statement)
        key = memo_key(self.store.name, statement, params=self.visibility.params)
        return self.names.get(key, lambda: self._run(statement))

    def _titled(self, folded: str) -> list[FocusEntity]:
        out = []
        for label in TITLED_LABELS:
            for r in self._titles(label):
                name = str(r["name"])
                title = _folded(name)
                if len(title) >= MIN_TITLE and f" {title} " in folded:
                    out.append(_entity(label, {"id": r["id"], "name": name}))
        return out


def _folded(name: str) -> str:
    return fold(name).strip()


def _entity(label: str, props: dict[str, Any]) -> FocusEntity:
    return FocusEntity(label=label, name=props["name"], node_id=display_id(label, props))
