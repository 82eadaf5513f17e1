"""The running processes, each seen alive at its last heartbeat (`bot.delivery.peers`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from storage.models import ProcessRow


@dataclass(frozen=True, slots=True)
class Process:
    id: str
    role: str
    started_at: datetime
    seen_at: datetime


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

    async def leave(self, process_id: str) -> None:
        """The process stopped: the others need not wait for it to go stale."""
        await self._s.execute(delete(ProcessRow).where(ProcessRow.id == process_id))

    async def forget(self, before: datetime) -> None:
        """Remove the processes last seen before `before` (they died)."""
        await self._s.execute(delete(ProcessRow).where(ProcessRow.seen_at < before))
