"""Several processes, one bot: sharing Telegram's overall flood limit, and the chats.

Each `paperwatch run` process registers in the `processes` table and beats every
`interval` seconds; one not seen for three intervals is taken for dead and forgotten.
From the live ones each process works out its `Share`:

- `rate`: its fraction of the bot's overall rate, which Telegram counts (~30 messages
  a second) whichever process sends. Processes that only answer commands (role
  poller) keep a tenth each (`REPLIES`, 3 messages/s: replies are few); the
  delivering ones split the rest evenly.
- `slot` of `workers` (the processes that deliver, roles all and worker, oldest
  first): a worker claims only the outbox rows of chats whose id is `slot` modulo
  `workers`, so all of a chat's messages leave through one process's limiter and the
  per-chat and per-group limits hold as they do in one process.

A process that starts beside others sends no outbox rows until each of them has beaten
since it registered (two intervals), so they have made room for it first. A process
that stops unregisters and the others take over at their next beat; one that dies is
waited out until it goes stale. While the shares change, two workers may own a chat
for a moment: a 429 then costs a wait (`retry_after`), never a message.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from storage.uow import UnitOfWork

log = logging.getLogger(__name__)

DELIVERING = ("all", "worker")
SILENT_BEATS = 3  # a process not seen for this many intervals is taken for dead
REPLIES = 0.1  # the fraction of the overall rate kept by a process that only answers


@dataclass(frozen=True, slots=True)
class Share:
    slot: int = 0
    workers: int = 1
    rate: float = 1.0


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _rate(delivering: bool, workers: int, answering: int) -> float:
    """The fraction of the overall rate for a process among `workers` delivering ones
    and `answering` ones that only answer commands."""
    if not workers:
        return 1.0 / max(1, answering)
    if not answering:
        return 1.0 / workers
    replies = min(REPLIES, 0.5 / answering)
    return (1.0 - replies * answering) / workers if delivering else replies


class Peers:
    def __init__(
        self,
        uow_factory: Callable[[], UnitOfWork],
        role: str,
        *,
        interval: float = 5.0,
        on_share: Callable[[Share], None] = lambda share: None,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.role = role
        self.share = Share()
        self._uow = uow_factory
        self._interval = timedelta(seconds=interval)
        self._on_share = on_share
        self._clock = clock
        self._ready_at: datetime | None = None

    async def beat(self) -> Share:
        """Say this process is alive, and take its share of what the live ones do."""
        now = self._clock()
        async with self._uow() as uow:
            await uow.processes.beat(self.id, self.role, now)
            await uow.processes.forget(before=now - SILENT_BEATS * self._interval)
            live = await uow.processes.live(now - SILENT_BEATS * self._interval)
            await uow.commit()
        if self._ready_at is None:
            alone = [p.id for p in live] == [self.id]
            self._ready_at = now if alone else now + 2 * self._interval
        workers = [p.id for p in live if p.role in DELIVERING]
        share = Share(
            slot=workers.index(self.id) if self.id in workers else 0,
            workers=max(1, len(workers)),
            rate=_rate(self.id in workers, len(workers), len(live) - len(workers)),
        )
        if share != self.share:
            log.info(
                "sharing with %d process(es): slot %d of %d worker(s), %.0f%% of the rate",
                len(live),
                share.slot,
                share.workers,
                100 * share.rate,
            )
            self.share = share
            self._on_share(share)
        return share

    def ready(self) -> bool:
        """Whether the other processes have had time to make room for this one."""
        return self._ready_at is not None and self._clock() >= self._ready_at

    async def leave(self) -> None:
        """Unregister at shutdown, so the others take over at their next beat."""
        async with self._uow() as uow:
            await uow.processes.leave(self.id)
            await uow.commit()
