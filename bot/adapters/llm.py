"""/ask's optional language model: any OpenAI-compatible chat-completions endpoint.

`PAPERWATCH_LLM_URL` is the endpoint's base URL, e.g. `https://api.openai.com/v1` or a local
`http://127.0.0.1:8080/v1`: the writer POSTs to `{PAPERWATCH_LLM_URL}/chat/completions`
(a URL that already ends in `/chat/completions` is used as given), with the key as a
Bearer token and `PAPERWATCH_LLM_MODEL` as the model. One call per question: the system
instructions and the numbered passages (`bot.topics.llm_prompt`), `max_tokens`
`ANSWER_TOKENS`, temperature 0, no streaming, no redirects followed (the key goes to that
host only).

Everything that goes wrong becomes one of two errors of `bot.ports`: `WriterTimeout` when
no answer came within `PAPERWATCH_LLM_TIMEOUT` seconds (the whole call, not each read),
`WriterUnavailable` for a refused connection, an HTTP error status, a body over
`MAX_BODY_BYTES` or one that is not a chat completion. The log says which, with the
status, never the key or the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

from bot.config import Settings
from bot.ports import WriterTimeout, WriterUnavailable, WrittenAnswer
from bot.topics.llm_prompt import ANSWER_TOKENS, SYSTEM, Passage, user_message

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
_PATH = "/chat/completions"


def completions_url(base: str) -> str:
    """The chat-completions URL of an endpoint's base URL (or of itself, given whole)."""
    url = base.strip().rstrip("/")
    return url if url.endswith(_PATH) else url + _PATH


class ChatCompletionsWriter:
    """`bot.ports.AnswerWriter` over an OpenAI-compatible endpoint."""

    def __init__(self, client: httpx.AsyncClient, url: str, model: str, timeout: float) -> None:
        self._client = client
        self._url = url
        self._model = model
        self._timeout = timeout

    async def write(self, question: str, passages: Sequence[Passage]) -> WrittenAnswer:
        body = {
            "model": self._model,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": user_message(question, passages)},
            ],
            "max_tokens": ANSWER_TOKENS,
            "temperature": 0,
            "stream": False,
        }
        try:
            async with asyncio.timeout(self._timeout):
                response = await self._client.post(self._url, json=body)
        except (TimeoutError, httpx.TimeoutException) as exc:
            log.warning("language model: no answer within %gs", self._timeout)
            raise WriterTimeout() from exc
        except httpx.HTTPError as exc:
            log.warning("language model unreachable: %s", type(exc).__name__)
            raise WriterUnavailable() from exc
        if response.status_code != 200:
            log.warning("language model answered HTTP %d", response.status_code)
            raise WriterUnavailable()
        return parse_completion(response.content)


def parse_completion(content: bytes) -> WrittenAnswer:
    """The answer and its cost from a chat-completions response body."""
    if len(content) > MAX_BODY_BYTES:
        log.warning("language model: a body of %d bytes, not read", len(content))
        raise WriterUnavailable()
    try:
        data: Any = json.loads(content)
        text = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        log.warning("language model: the body is not a chat completion")
        raise WriterUnavailable() from exc
    if not isinstance(text, str) or not text.strip():
        log.warning("language model: an empty answer")
        raise WriterUnavailable()
    usage = data.get("usage") if isinstance(data, dict) else None
    total = usage.get("total_tokens") if isinstance(usage, dict) else None
    valid = isinstance(total, int) and not isinstance(total, bool) and total >= 0
    return WrittenAnswer(text=text, total_tokens=total if valid else None)


@contextlib.asynccontextmanager
async def answer_writer(settings: Settings) -> AsyncIterator[ChatCompletionsWriter | None]:
    """The writer while the bot runs, when the settings turn the model on; None otherwise
    (and a `StartupError` for a partial configuration, from `Settings.llm_enabled`)."""
    if not settings.llm_enabled:
        yield None
        return
    assert settings.llm_url and settings.llm_api_key and settings.llm_model
    headers = {"Authorization": f"Bearer {settings.llm_api_key.get_secret_value()}"}
    timeout = httpx.Timeout(settings.llm_timeout)
    async with httpx.AsyncClient(headers=headers, timeout=timeout) as client:
        url = completions_url(settings.llm_url)
        yield ChatCompletionsWriter(client, url, settings.llm_model, settings.llm_timeout)
