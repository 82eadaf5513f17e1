"""The language model's daily token count (`bot.ports.TokenBudgetStore`), table `llm_budget`.

A reservation is one statement after the day's row exists: `UPDATE ... SET tokens = tokens +
n WHERE day = d AND tokens + n <= limit`. PostgreSQL locks the row for the UPDATE, and a
second transaction updating it waits, then evaluates its condition on the committed count
(READ COMMITTED): two processes cannot both pass the limit. SQLite runs one writer at a time.
The caller commits the reservation before calling the model, and settles it in a new
transaction afterwards.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from storage.models import LlmBudgetRow


class LlmBudgetRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def reserve(self, day: date, tokens: int, limit: int) -> bool:
        """Add `tokens` to `day`'s count if it stays within `limit`; whether it did."""
        if tokens > limit:
            return False
        await self._ensure(day)
        table = LlmBudgetRow.__table__
        done = await self._s.execute(
            update(table)
            .where(table.c.day == day, table.c.tokens + tokens <= limit)
            .values(tokens=table.c.tokens + tokens)
        )
        return bool(done.rowcount)  # type: ignore[attr-defined]

    async def settle(self, day: date, reserved: int, used: int) -> None:
        """Replace a reservation of `reserved` tokens on `day` by the `used` ones."""
        if used == reserved:
            return
        await self._ensure(day)
        table = LlmBudgetRow.__table__
        await self._s.execute(
            update(table)
            .where(table.c.day == day)
            .values(tokens=table.c.tokens + (max(used, 0) - reserved))
        )

    async def used(self, day: date) -> int:
        found = await self._s.scalar(select(LlmBudgetRow.tokens).where(LlmBudgetRow.day == day))
        return found or 0

    async def _ensure(self, day: date) -> None:
        """The day's row, created at 0 once, whoever gets there first."""
        dialect = self._s.get_bind().dialect.name
        insert = pg_insert if dialect == "postgresql" else sqlite_insert
        await self._s.execute(
            insert(LlmBudgetRow).values(day=day, tokens=0).on_conflict_do_nothing()
        )
