"""Telegram's flood limits, kept before Telegram has to enforce them.

Telegram counts at most ~30 messages in any second overall, 1 per second per chat
and 20 in any minute per group, and answers 429 with `retry_after` past them. A
token bucket lets a burst through and then counts differently, so this limiter
spaces sends instead, on the times they are actually sent:

- one request per chat at a time; a chat's next send waits until 1/rate (x margin)
  after its last one;
- a group keeps the send times of its last 20 messages and waits for the oldest to
  leave the 60-second window;
- overall, sends are spaced evenly on one schedule (1/30 s x margin apart), kept by
  the times sends really left, and that slot is taken last, right before the HTTP call;
- a 429 holds back only the chat it was about, for `retry_after`, then retries (up to
  `rate_limit_args` times: the outbox worker asks for none and requeues the row);
- several processes sending for one bot each keep a share of the overall rate
  (`share`, from `bot.services.peers`), less a little more slack: they cannot see each
  other's send times, so one process's sends bunched by jitter on the way are not made
  up for by the others;
- at most `max_in_flight` of these requests are in flight at once (`MAX_IN_FLIGHT`);
  the rest wait here, in order, and take their overall slot when their turn comes.

The last rule is for us, not for Telegram: it keeps the connections to the Bot API few
(the HTTP pool has a few more, for requests about no chat), and a request waiting for
a connection inside the HTTP client would fail after its pool timeout; waiting here
costs nothing and keeps the order.

Requests that are not about a chat (getUpdates, answerCallbackQuery, ...) pass freely.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter


class Retries(int):
    """How many times to retry after a 429, as a request's `rate_limit_args`: true even
    when 0, because PTB drops a false `rate_limit_args` (and the default would apply)."""

    def __bool__(self) -> bool:
        return True


NO_RETRIES = Retries(0)  # the outbox worker's: a 429 goes back to the outbox

MARGIN = 1.03  # 3% slack over Telegram's overall and group figures, for jitter
# Two sends to one chat can arrive closer together than they left (network jitter):
# keep 10% more between them.
CHAT_MARGIN = 1.10
# Processes sharing the overall rate each leave 7% more of their share unused (10% in
# all): jitter of up to ~70 ms on one process's sends still keeps the sum under the rate.
SHARED_SLACK = 1.07
# Sends on the wire at once: enough for 30 messages/s at round trips up to ~250 ms, and
# for over 500 messages/s to a server on this machine (bench/bench_delivery.py).
MAX_IN_FLIGHT = 8


def seconds(value: Any) -> float:
    """PTB's retry_after, an int or a timedelta depending on its version and settings."""
    return float(value.total_seconds()) if hasattr(value, "total_seconds") else float(value)


def _is_group(chat_id: object) -> bool:
    """Negative ids are groups and channels; @usernames are channels."""
    try:
        return int(str(chat_id)) < 0
    except ValueError:
        return True


class TelegramRateLimiter(BaseRateLimiter[int]):
    def __init__(
        self,
        *,
        messages_per_second: float = 30.0,
        chat_messages_per_second: float = 1.0,
        group_messages_per_minute: float = 20.0,
        max_retries: int = 5,
        max_in_flight: int = MAX_IN_FLIGHT,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._rate = messages_per_second
        self._chat_gap = CHAT_MARGIN / chat_messages_per_second
        self._group_size = max(1, int(group_messages_per_minute))
        self._group_window = 60.0 * MARGIN * self._group_size / group_messages_per_minute
        self._max_retries = max_retries
        self._clock = clock
        self._sleep = sleep
        self._next_slot = 0.0
        self._slot_lock = asyncio.Lock()
        self._recent: deque[float] = deque()
        self._overall(messages_per_second)
        self._in_flight = asyncio.Semaphore(max_in_flight)
        self._chat_locks: dict[str, asyncio.Lock] = {}
        self._chat_next: dict[str, float] = {}
        self._group_sent: dict[str, deque[float]] = {}

    def share(self, rate: float) -> None:
        """Keep to `rate` of the overall messages a second: other processes send for this
        bot too. Per-chat and per-group limits stay whole: each chat is sent to by one
        process. A share smaller than the whole rate keeps SHARED_SLACK more room."""
        if rate < self._rate:
            rate /= SHARED_SLACK
        self._overall(min(self._rate, max(rate, 1e-3)))

    def _overall(self, rate: float) -> None:
        """Space sends 1/rate (x margin) apart, and keep any `size` of them at least
        size/rate (x margin) apart, `size` the whole number of sends in a second."""
        size = max(1, int(rate))
        self._gap = MARGIN / rate
        self._window = MARGIN * size / rate
        self._recent = deque(self._recent, maxlen=size)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    async def _until(self, moment: float) -> None:
        delay = moment - self._clock()
        if delay > 0:
            await self._sleep(delay)

    async def _overall_slot(self) -> None:
        """Wait for this send's turn on the overall schedule, by the times sends really
        left: a send that wakes late pushes the next ones back instead of letting them
        leave in a bunch, and no window of 1 s (x margin) ever holds more than the rate."""
        async with self._slot_lock:
            await self._until(self._next_slot)
            if len(self._recent) == self._recent.maxlen:
                await self._until(self._recent[0] + self._window)
            now = self._clock()
            self._recent.append(now)
            # Lateness under half a gap keeps the schedule (sleeps overshoot a little);
            # more starts it again from now.
            self._next_slot = max(self._next_slot, now - self._gap / 2) + self._gap

    async def _group_room(self, key: str) -> deque[float]:
        sent = self._group_sent.setdefault(key, deque())
        while len(sent) >= self._group_size:
            free_at = sent[0] + self._group_window
            if self._clock() >= free_at - 1e-6:  # float rounding must not keep us waiting
                sent.popleft()
            else:
                await self._until(free_at)
        return sent

    def _forget_idle(self) -> None:
        """Drop the state of chats that are neither sending nor waiting."""
        now = self._clock()
        for key in [k for k, lock in self._chat_locks.items() if not lock.locked()]:
            if self._chat_next.get(key, 0.0) <= now:
                del self._chat_locks[key]
                self._chat_next.pop(key, None)
                sent = self._group_sent.get(key)
                if not sent or now - sent[-1] >= self._group_window:
                    self._group_sent.pop(key, None)

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | dict[str, Any] | list[dict[str, Any]]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | dict[str, Any] | list[dict[str, Any]]:
        chat_id = data.get("chat_id")
        if chat_id is None:
            return await callback(*args, **kwargs)
        key = str(chat_id)
        if len(self._chat_locks) > 10_000:
            self._forget_idle()
        lock = self._chat_locks.setdefault(key, asyncio.Lock())
        retries = rate_limit_args if rate_limit_args is not None else self._max_retries
        async with lock:
            for attempt in range(retries + 1):
                await self._until(self._chat_next.get(key, 0.0))
                group = await self._group_room(key) if _is_group(chat_id) else None
                async with self._in_flight:
                    await self._overall_slot()
                    sent_at = self._clock()
                    self._chat_next[key] = sent_at + self._chat_gap
                    if group is not None:
                        group.append(sent_at)
                    try:
                        return await callback(*args, **kwargs)
                    except RetryAfter as exc:
                        # This process's next sends to the chat wait too, retried or not.
                        self._chat_next[key] = self._clock() + seconds(exc.retry_after) + 0.1
                        if attempt == retries:
                            raise
        raise AssertionError("unreachable")
