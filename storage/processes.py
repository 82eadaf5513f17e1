"""The running processes, each seen alive at its last heartbeat (`bot.services.peers`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import Process
from bot.outbox_payloads import OutboxStatus
from storage.models import OutboxRow, ProcessRow


class ProcessRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def beat(self, process_id: str, role: str, now: datetime) -> None:
        """Record that the process is alive now (registering it the first time)."""
        table = ProcessRow.__table__
        seen = await self._s.execute(
            update(table).where(table.c.id == process_id).values(seen_at=now, role=role)
        )
        if not seen.rowcount:  # type: ignore[attr-defined]
            await self._s.execute(
                table.insert().values(id=process_id, role=role, started_at=now, seen_at=now)
            )

    async def live(self, since: datetime) -> list[Process]:
        """The processes seen at `since` or later, oldest first."""
        rows = await self._s.execute(
            select(ProcessRow.__table__)
            .where(ProcessRow.seen_at >= since)
            .order_by(ProcessRow.started_at, ProcessRow.id)
        )
        return [Process(*row) for row in rows]

    async def leave(self, process_id: str, now: datetime) -> None:
        """The process stopped: the others need not wait for it to go stale, nor for
        the leases of its claims to end."""
        await self._release(OutboxRow.claimed_by == process_id, now)
        await self._s.execute(delete(ProcessRow).where(ProcessRow.id == process_id))

    async def forget(self, before: datetime, now: datetime) -> int:
        """Remove the processes last seen before `before` (they died), and release their
        claims: the rows they were sending are due again `now`, their attempt taken
        back, rather than waiting for the lease to end. Returns the claims released.
        """
        dead = select(ProcessRow.id).where(ProcessRow.seen_at < before)
        released = await self._release(OutboxRow.claimed_by.in_(dead), now)
        await self._s.execute(delete(ProcessRow).where(ProcessRow.seen_at < before))
        return released

    async def _release(self, claimed: ColumnElement[bool], now: datetime) -> int:
        """The rows being sent under those claims are due again `now`; the claim's
        attempt is taken back (a process that stopped is not a failed try)."""
        released = await self._s.execute(
            update(OutboxRow)
            .where(OutboxRow.status == OutboxStatus.SENDING, claimed)
            .values(
                status=OutboxStatus.PENDING,
                due_at=now,
                attempts=OutboxRow.attempts - 1,
                claimed_by=None,
            )
            .execution_options(synchronize_session=False)
        )
        return int(released.rowcount or 0)  # type: ignore[attr-defined]
