"""Recording sends with one transaction for many: a group commit.

Every message sent must be recorded before its row can be claimed again, or a crash
would send it twice. One transaction per message costs more than the send itself, so
records that arrive while a transaction runs wait and go together into the next one.
Each caller returns only once its own record is committed (or with the error that
stopped it), so nothing is acknowledged before it is durable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import datetime

from bot.outbox_payloads import Progress
from bot.ports import UnitOfWork


class GroupCommit:
    def __init__(
        self,
        uow_factory: Callable[[], UnitOfWork],
        clock: Callable[[], datetime],
        *,
        claimed_by: str | None = None,
    ) -> None:
        self._uow = uow_factory
        self._clock = clock
        self._claimed_by = claimed_by  # only rows this process still holds are recorded
        self._waiting: list[tuple[Progress, asyncio.Future[None]]] = []
        self._lock = asyncio.Lock()

    async def record(self, progress: Iterable[Progress]) -> None:
        """Commit `progress`, together with whatever else is waiting."""
        loop = asyncio.get_running_loop()
        mine = []
        for item in progress:
            future: asyncio.Future[None] = loop.create_future()
            self._waiting.append((item, future))
            mine.append(future)
        if not mine:
            return
        async with self._lock:
            if not mine[-1].done():  # nobody took ours along: commit everything waiting
                await self._flush()
        for future in mine:
            await future

    async def _flush(self) -> None:
        batch, self._waiting = self._waiting, []
        try:
            async with self._uow() as uow:
                await uow.outbox.record([p for p, _ in batch], self._clock(), self._claimed_by)
                await uow.commit()
        except BaseException as exc:
            error = exc if isinstance(exc, Exception) else RuntimeError("commit interrupted")
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            if not isinstance(exc, Exception):
                raise
            return
        for _, future in batch:
            future.set_result(None)
