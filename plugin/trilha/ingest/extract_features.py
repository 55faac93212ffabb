"""The decision fields of feature search, extracted at ingest by a Groq model when
``TRILHA_FEATURE_EXTRACTION=llm`` (seed 001: "21 campos extraidos por IA").

Each new or changed document is sent once (its first ``MAX_CHARS`` characters) with the list of
:data:`~trilha.retrieve.features.FEATURE_FIELDS`; the model answers JSON. Only known fields of
the right type are kept (``categorias`` and ``precedentes_citados`` lists of strings,
``unanimidade`` a boolean, the rest strings or lists of strings), and a field the document's own
front matter or record sets is never replaced. A timeout, an error or a bad answer leaves the
document as it is, with one line in the ingest's errors; nothing is refused for it. The content
hash that decides whether a document changed is the one of the document *before* extraction, so
an unchanged document is not sent again.
"""

from __future__ import annotations

import json
from typing import Any

from trilha.ingest.loaders import SourceDocument
from trilha.retrieve.features import FEATURE_FIELDS

#: The most of a document's text the model is shown.
MAX_CHARS = 12_000
_LISTS = ("categorias", "precedentes_citados")
PROMPT = (
    "You extract structured fields from a Brazilian court decision. Answer with one JSON object "
    "whose keys are among: {fields}. 'categorias' and 'precedentes_citados' are lists of short "
    "strings; 'unanimidade' is true or false; every other field is a short string in the "
    "decision's language. Leave out any field the text does not state. If the text is not a "
    "court decision, answer {{}}."
)


class FeatureExtractor:
    """Fills a document's missing decision fields with a Groq chat model (``groq.Groq``)."""

    def __init__(self, client: Any, model: str, timeout_s: float) -> None:
        self.client = client.with_options(timeout=timeout_s, max_retries=0)
        self.model = model

    def enrich(self, doc: SourceDocument) -> tuple[SourceDocument, str | None]:
        """``doc`` with the extracted fields it lacked, and a one-line warning on failure."""
        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": PROMPT.format(fields=", ".join(FEATURE_FIELDS))},
                    {"role": "user", "content": doc.text[:MAX_CHARS]},
                ],
                response_format={"type": "json_object"},
                temperature=0,
            )
            found = json.loads(completion.choices[0].message.content or "{}")
            if not isinstance(found, dict):
                raise ValueError("the answer is not a JSON object")
        except Exception as e:  # the client's timeouts, HTTP errors and bad JSON alike
            reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip()
            return doc, f"{doc.where}: feature extraction failed ({self.model}, {reason})"
        fields = {k: v for k, v in valid_fields(found).items() if k not in doc.meta}
        return doc.model_copy(update={"meta": {**doc.meta, **fields}}), None


def valid_fields(found: dict[str, Any]) -> dict[str, Any]:
    """The known fields of ``found`` whose values have the right type (see the module)."""
    out: dict[str, Any] = {}
    for key, value in found.items():
        if key not in FEATURE_FIELDS or value is None:
            continue
        if key == "unanimidade":
            if isinstance(value, bool):
                out[key] = value
        elif isinstance(value, list):
            items = [str(v).strip() for v in value if isinstance(v, str | int | float)]
            if items:
                out[key] = [i for i in items if i]
        elif isinstance(value, str | int | float) and str(value).strip():
            out[key] = [str(value).strip()] if key in _LISTS else str(value).strip()
    return out
