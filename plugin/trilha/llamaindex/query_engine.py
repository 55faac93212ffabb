"""TrilhaQueryEngine: UC09's cited answer as a LlamaIndex query engine (sync and async)."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from trilha.answer import Answer, aask, ask, ask_request
from trilha.workspace import Workspace


class TrilhaQueryEngine(BaseQueryEngine):
    """Answers a query with :func:`trilha.answer.ask` over a workspace.

    The keyword arguments are the answer request's fields (``principal``, ``filters``,
    ``project_id``, ``k``, ``top_n``, ``rerank``, ``max_tokens_ctx``), validated once here. The
    ``Response`` holds the cited answer (``response``), one source node per citation (its text
    is the masked snippet, its metadata the citation) and, in ``metadata``, ``trace_id``,
    ``citations``, ``metrics``, ``no_answer`` and the whole ``answer``.
    """

    def __init__(self, workspace: Workspace, **request: Any) -> None:
        super().__init__(callback_manager=request.pop("callback_manager", None))
        self.workspace = workspace
        self.fields = request
        ask_request("(template)", **dict(request))  # refuse bad parameters now

    def _query(self, query_bundle: QueryBundle) -> Response:
        return _response(ask(self.workspace, query_bundle.query_str, **dict(self.fields)))

    async def _aquery(self, query_bundle: QueryBundle) -> Response:
        answer = await aask(self.workspace, query_bundle.query_str, **dict(self.fields))
        return _response(answer)

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {}


def _response(answer: Answer) -> Response:
    nodes = [
        NodeWithScore(
            node=TextNode(
                id_=c.unit_id,
                text=c.snippet,
                metadata=c.model_dump(mode="json", exclude={"snippet", "score"}),
            ),
            score=c.score,
        )
        for c in answer.citations
    ]
    metadata = {
        "trace_id": answer.trace_id,
        "citations": [c.model_dump(mode="json") for c in answer.citations],
        "metrics": answer.metrics.model_dump(mode="json"),
        "no_answer": answer.no_answer.model_dump() if answer.no_answer else None,
        "answer": answer.model_dump(mode="json"),
    }
    text = answer.answer if answer.no_answer is None else f"No answer: {answer.no_answer.reason}"
    return Response(response=text, source_nodes=nodes, metadata=metadata)
