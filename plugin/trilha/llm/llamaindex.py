"""A LlamaIndex LLM (``llm=``, else ``Settings.llm``) behind the chat-completions call that
trilha's LLM steps make (query expansion, the Pre-query classifier), so that a LlamaIndex
user's model serves them when trilha's own settings name none (a Groq key wins).

LlamaIndex is not imported to read ``Settings.llm``: a process that has not loaded it has set
none, and trilha's core stays free of it.
"""

from __future__ import annotations

import contextvars
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from types import SimpleNamespace
from typing import Any

#: A JSON answer inside a Markdown code fence (chat models without a JSON mode write them).
_FENCED = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def settings_llm() -> Any | None:
    """``Settings.llm`` when LlamaIndex is loaded and one was set (never its OpenAI default)."""
    module = sys.modules.get("llama_index.core.settings")
    return None if module is None else module.Settings._llm


def chat_client(llm: Any | None = None) -> LlamaIndexChatClient | None:
    """A chat-completions client over ``llm``, else over ``Settings.llm``; None without one."""
    chosen = llm if llm is not None else settings_llm()
    return None if chosen is None else LlamaIndexChatClient(chosen)


class LlamaIndexChatClient:
    """``client.chat.completions.create(messages=...)`` answered by ``llm.chat``, the shape of
    the ``groq.Groq`` calls it stands in for; a call past ``timeout`` seconds raises
    :class:`TimeoutError` (the model's own call is left to finish in its thread)."""

    def __init__(self, llm: Any, timeout: float | None = None) -> None:
        self.llm = llm
        self.timeout = timeout
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    @property
    def model(self) -> str:
        """The model's name, as warnings and traces show it."""
        name = getattr(getattr(self.llm, "metadata", None), "model_name", None)
        return str(name or type(self.llm).__name__)

    def with_options(self, timeout: float | None = None, **ignored: Any) -> LlamaIndexChatClient:
        """The same model with another timeout (retries: none, as for Groq)."""
        return LlamaIndexChatClient(self.llm, timeout)

    def create(self, *, messages: list[dict[str, str]], **ignored: Any) -> SimpleNamespace:
        """The model's answer to ``messages``, as a chat completion (``choices[0].message``)."""
        from llama_index.core.llms import ChatMessage

        chat = [ChatMessage(role=m["role"], content=m["content"]) for m in messages]
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trilha-llm")
        try:
            call = pool.submit(contextvars.copy_context().run, self.llm.chat, chat)
            response = call.result(timeout=self.timeout)
        except FuturesTimeout as e:
            raise TimeoutError(f"{self.model} gave no answer within {self.timeout:g} s") from e
        finally:
            pool.shutdown(wait=False)
        content = str(response.message.content or "")
        fenced = _FENCED.match(content)
        message = SimpleNamespace(content=fenced.group(1) if fenced else content)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])
