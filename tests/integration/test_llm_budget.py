"""The language model's daily token budget (`llm_budget`, migration 0014) on both databases:
reservations within the limit pass and past it fail, settling replaces the estimate by the
tokens used, days are separate, a rolled-back reservation counts nothing, and two
reservations racing on separate connections cannot both pass the limit."""

from __future__ import annotations

import asyncio
from datetime import date

from storage.database import Database

DAY, NEXT = date(2026, 12, 2), date(2026, 12, 3)


async def reserve(db: Database, tokens: int, limit: int, day: date = DAY) -> bool:
    async with db.uow() as uow:
        done = await uow.llm_budget.reserve(day, tokens, limit)
        await uow.commit()
        return done


async def used(db: Database, day: date = DAY) -> int:
    async with db.uow() as uow:
        return await uow.llm_budget.used(day)


async def test_reservations_stop_at_the_limit_and_settle_to_what_was_used(db: Database) -> None:
    assert await used(db) == 0
    assert await reserve(db, 600, 1000)
    assert not await reserve(db, 401, 1000)
    assert await reserve(db, 400, 1000)  # exactly the limit
    assert await used(db) == 1000
    async with db.uow() as uow:
        await uow.llm_budget.settle(DAY, 600, 250)  # the model spent less than reserved
        await uow.commit()
    assert await used(db) == 650
    assert await reserve(db, 350, 1000)
    assert not await reserve(db, 1, 1000)
    assert not await reserve(db, 2000, 1000, NEXT)  # more than a whole day's budget
    assert await reserve(db, 1000, 1000, NEXT)  # a new day starts from nothing
    assert await used(db) == 1000


async def test_a_reservation_rolled_back_counts_nothing(db: Database) -> None:
    async with db.uow() as uow:
        assert await uow.llm_budget.reserve(DAY, 700, 1000)
    assert await used(db) == 0
    assert await reserve(db, 1000, 1000)


async def test_two_racing_reservations_cannot_both_pass_the_limit(db: Database) -> None:
    """The first holds its reservation uncommitted while the second tries: the second
    waits for it (a row lock on PostgreSQL, the write lock on SQLite), then sees it."""
    assert await reserve(db, 100, 1000)  # the day's row exists; both race on the UPDATE
    async with db.uow() as first:
        assert await first.llm_budget.reserve(DAY, 600, 1000)
        second = asyncio.create_task(reserve(db, 600, 1000))
        await asyncio.sleep(0.3)
        assert not second.done()  # blocked behind the first, not passing beside it
        await first.commit()
    assert not await asyncio.wait_for(second, 10)
    assert await used(db) == 700


async def test_many_processes_at_once_never_spend_past_the_limit(db: Database) -> None:
    """Twenty reservations of 100 at once against a limit of 1,000, from a fresh day (the
    row created by whoever comes first): exactly ten pass."""
    results = await asyncio.gather(*(reserve(db, 100, 1000, NEXT) for _ in range(20)))
    assert sum(results) == 10
    assert await used(db, NEXT) == 1000
