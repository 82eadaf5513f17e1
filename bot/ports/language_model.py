"""The optional language model behind /ask, and the daily token budget it spends.

`AnswerWriter` is what /ask (`handlers.ask_llm`) calls: the question and numbered passages
(`bot.topics.llm_prompt.Passage`) in, a `WrittenAnswer` out, or one of the `WriterError`s
below, which /ask turns into the extractive answer and one line saying why.
`bot.adapters.llm.ChatCompletionsWriter` implements it for any OpenAI-compatible endpoint.

`TokenBudgetStore` counts the tokens spent per UTC day, shared by every process on the
database: a call reserves its estimate first (refused past the limit) and settles it with
what the model reported after.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from bot.topics.llm_prompt import Passage


@dataclass(frozen=True, slots=True)
class WrittenAnswer:
    """The model's answer text, as it came (not yet checked), and what it cost."""

    text: str
    total_tokens: int | None  # `usage.total_tokens`; None when the endpoint did not say


class WriterError(Exception):
    """The model gave no usable answer; `reason` is the one line /ask shows instead."""

    reason = "The language model could not answer just now; here are the abstracts' own words."


class WriterUnavailable(WriterError):
    """Refused, unreachable, an HTTP error, or a body that is not a chat completion."""


class WriterTimeout(WriterError):
    reason = "The language model did not answer in time; here are the abstracts' own words."


class BudgetExhausted(WriterError):
    reason = (
        "Today's language-model budget is spent; here are the abstracts' own words "
        "(it renews at midnight UTC)."
    )


class AnswerWriter(Protocol):
    """A language model that answers a question from numbered passages, citing them [n]."""

    async def write(self, question: str, passages: Sequence[Passage]) -> WrittenAnswer:
        """Raises `WriterTimeout` or `WriterUnavailable` (never anything else)."""
        ...


class TokenBudgetStore(Protocol):
    """Tokens spent on the language model per UTC day, across processes."""

    async def reserve(self, day: date, tokens: int, limit: int) -> bool:
        """Add `tokens` to `day`'s count if it stays within `limit`, atomically; whether
        it did (two processes reserving at once cannot both pass the limit)."""
        ...

    async def settle(self, day: date, reserved: int, used: int) -> None:
        """Replace a reservation of `reserved` tokens on `day` by the `used` ones."""
        ...

    async def used(self, day: date) -> int:
        """The tokens counted on `day` (0 for a day without any)."""
        ...
