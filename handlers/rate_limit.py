"""The command rate limit: per person and per chat, with a small burst.

Rule: a command is run only when both its sender's bucket and its chat's bucket have
room (aiolimiter leaky buckets holding `burst` commands, draining at the configured
rate per minute); otherwise nothing is executed. The first refused command of a flood
is told to wait; later ones get no answer at all until the bucket has drained
completely, so a flood never makes the bot flood the chat back. Idle buckets (fully
drained) are forgotten once there are `max_keys`, and the oldest go if all are busy,
so memory stays bounded whatever the number of senders.

The terminal chat is not limited: its only user is the operator at the keyboard (and a
script piping commands into `paperwatch console`).
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field

from aiolimiter import AsyncLimiter

from bot.domain import Command, Platform

log = logging.getLogger(__name__)


class Verdict(enum.Enum):
    ALLOW = "allow"
    TELL = "tell"  # refused; say so once
    SILENT = "silent"  # refused; already told during this flood


@dataclass(slots=True)
class _Bucket:
    limiter: AsyncLimiter
    told: bool = False

    def drained(self) -> bool:
        return self.limiter.has_capacity(self.limiter.max_rate)


@dataclass
class CommandRateLimit:
    """`per_user` and `per_chat` commands a minute, each allowing `burst` at once."""

    per_user: float = 20.0
    per_chat: float = 30.0
    burst: int = 5
    max_keys: int = 10_000
    _buckets: dict[str, _Bucket] = field(default_factory=dict, init=False, repr=False)

    async def check(self, command: Command) -> Verdict:
        """Count one command, or refuse it; see the module docstring for the rule."""
        if command.chat.platform is Platform.CONSOLE:
            return Verdict.ALLOW
        keys = [(f"chat:{command.chat.platform}:{command.chat.external_id}", self.per_chat)]
        if command.user_id:
            keys.append((f"user:{command.chat.platform}:{command.user_id}", self.per_user))
        buckets = [self._bucket(key, rate) for key, rate in keys]
        for bucket in buckets:
            if bucket.told and bucket.drained():
                bucket.told = False  # the flood is over
        full = [b for b in buckets if not b.limiter.has_capacity()]
        if not full:
            for bucket in buckets:
                await bucket.limiter.acquire()  # has room: returns at once, never waits
            return Verdict.ALLOW
        if all(b.told for b in full):
            return Verdict.SILENT
        for bucket in full:
            bucket.told = True
        return Verdict.TELL

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, key: str, per_minute: float) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                self._forget()
            size = float(max(1, self.burst))
            bucket = self._buckets[key] = _Bucket(AsyncLimiter(size, size * 60.0 / per_minute))
        return bucket

    def _forget(self) -> None:
        """Drop drained buckets; if all are busy, the oldest quarter."""
        self._buckets = {k: b for k, b in self._buckets.items() if not b.drained()}
        excess = len(self._buckets) - self.max_keys * 3 // 4
        if excess > 0:
            log.warning("command rate limit tracks %d busy senders; forgetting the oldest", excess)
            for key in list(self._buckets)[:excess]:
                del self._buckets[key]
