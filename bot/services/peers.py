"""Several processes, one bot: sharing Telegram's overall flood limit, and the chats.

Each `paperwatch run` process registers in the `processes` table and beats every
`interval` seconds; one not seen for three intervals is taken for dead and forgotten.
From the live ones each process works out its `Share`:

- `rate`: its part of the bot's overall rate (`overall`, 30 messages a second), which
  Telegram counts whichever process sends. Processes that only answer commands (role
  poller) keep a tenth of it between them (`REPLIES`: replies are few); the
  delivering ones split the rest. Parts are whole messages a second where they can
  be (30 among 4 is 8, 8, 7 and 7, not 7.5 each): each limiter keeps any second to
  its rate's whole number of sends, so the parts' whole numbers must add up to at
  most the overall rate.
- `slot` of `workers` (the processes that deliver, roles all and worker, oldest
  first): a worker claims only the outbox rows of chats whose id is `slot` modulo
  `workers`, so all of a chat's messages leave through one process's limiter and the
  per-chat and per-group limits hold as they do in one process.

A process that starts beside others sends no outbox rows until each of them has beaten
since it registered (two intervals), so they have made room for it first. A process
that stops unregisters and the others take over at their next beat; one that dies is
waited out until it goes stale. Either way its claims on outbox rows are released
then (a stale one's by the first process to forget it), so its chats' messages
resume within three intervals of its last beat rather than at the end of a lease.
While the shares change, two workers may own a chat for a moment: a 429 then costs a
wait (`retry_after`), never a message.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.metrics import Metrics
from bot.ports import UnitOfWork

log = logging.getLogger(__name__)

DELIVERING = ("all", "worker")
SILENT_BEATS = 3  # a process not seen for this many intervals is taken for dead
REPLIES = 0.1  # the part of the overall rate kept by each process that only answers


@dataclass(frozen=True, slots=True)
class Share:
    slot: int = 0
    workers: int = 1
    rate: float = 30.0  # messages a second this process may send


def _utcnow() -> datetime:
    return datetime.now(UTC)


def allot(total: float, parts: int, index: int) -> float:
    """Part `index` of `total` split `parts` ways in whole numbers (the first ones get
    the spare units); an even split when there is less than one each."""
    base = math.floor(total / parts + 1e-9)
    if base < 1:
        return total / parts
    spare = math.floor(total - base * parts + 1e-9)
    return float(base + (1 if index < spare else 0))


def _rate(overall: float, workers: int, answering: int, delivering: bool, index: int) -> float:
    """The rate of process `index` among `workers` delivering ones (`delivering`) or
    among `answering` ones that only answer commands."""
    if not workers or not answering:
        return allot(overall, max(1, workers or answering), index)
    replies = max(1.0, math.floor(overall * min(REPLIES * answering, 0.5)))
    if delivering:
        return allot(overall - replies, workers, index)
    return allot(replies, answering, index)


class Peers:
    def __init__(
        self,
        uow_factory: Callable[[], UnitOfWork],
        role: str,
        *,
        interval: float = 5.0,
        overall: float = 30.0,
        on_share: Callable[[Share], None] = lambda share: None,
        clock: Callable[[], datetime] = _utcnow,
        process_id: str | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.id = process_id or uuid.uuid4().hex
        self.metrics = metrics or Metrics()
        self.role = role
        self.share = Share(rate=overall)
        self._overall = overall
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
            released = await uow.processes.forget(now - SILENT_BEATS * self._interval, now)
            live = await uow.processes.live(now - SILENT_BEATS * self._interval)
            await uow.commit()
        self.metrics.live(p.role for p in live)
        if released:
            log.info("released %d claim(s) of process(es) taken for dead", released)
        if self._ready_at is None:
            alone = [p.id for p in live] == [self.id]
            self._ready_at = now if alone else now + 2 * self._interval
        workers = [p.id for p in live if p.role in DELIVERING]
        answering = [p.id for p in live if p.role not in DELIVERING]
        delivering = self.id in workers
        index = (workers if delivering else answering).index(self.id)
        share = Share(
            slot=index if delivering else 0,
            workers=max(1, len(workers)),
            rate=_rate(self._overall, len(workers), len(answering), delivering, index),
        )
        if share != self.share:
            log.info(
                "sharing with %d process(es): slot %d of %d worker(s), %g messages/s",
                len(live),
                share.slot,
                share.workers,
                share.rate,
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
            await uow.processes.leave(self.id, self._clock())
            await uow.commit()
