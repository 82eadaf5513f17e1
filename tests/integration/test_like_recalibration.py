""" "Papers like these" sets recalibrated as the index grows, on both databases: a set followed
on a new deployment is calibrated on the bundled day; once a poll has stored enough papers of
the bot's own, the poller's after-poll step recalibrates it on them (the threshold /list shows
changes), not again within a week, and again after it; migration 0018 adds the columns."""

from __future__ import annotations

import random
from dataclasses import replace

import sqlalchemy as sa

from bench.relevance_catalog import load_split
from bot.adapters.console import CONSOLE_CHAT
from bot.domain import Paper
from bot.ports import LikeSet
from bot.scheduler import Jobs
from bot.services.like_recalibration import RECALIBRATE_AFTER, recalibrate_due
from bot.services.poll import PollOutcome
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.like import LikeProfile, like_tag
from bot.topics.like_calibration import (
    BACKGROUND_PAPERS,
    MIN_BACKGROUND,
    described_background,
    recalibrate,
)
from handlers.base import Context
from storage.database import Database
from tests.integration.test_delivery import START, Clock, ingest, say
from tests.integration.test_like_follows import positives


def listing(count: int) -> list[Paper]:
    """`count` real dev papers, none of the federated-learning set's, announced at START."""
    mine = {p.arxiv_id for p in positives("federated-learning")}
    papers = sorted(
        (p for i, p in load_split("dev").items() if i not in mine), key=lambda p: p.arxiv_id
    )
    chosen = random.Random(5).sample(papers, count)
    return [replace(p, announced=START.date()) for p in chosen]


class StoringPoller:
    """A poll that stores the given papers (what the real poller does with a listing)."""

    def __init__(self, db: Database, catalog: Catalog, clock: Clock, papers: list[Paper]):
        self.db, self.catalog, self.clock, self.papers = db, catalog, clock, papers

    async def catch_up(self) -> None:
        return None

    async def poll_daily(self) -> PollOutcome:
        await ingest(self.db, self.catalog, self.clock, *self.papers)
        return PollOutcome("rss", "stored", START.date(), new=len(self.papers))


async def stored_set(db: Database, tag: str) -> LikeSet:
    async with db.uow() as uow:
        found = await uow.like_sets.get(tag)
    assert found is not None
    return found


async def test_a_set_made_on_the_bundled_day_is_recalibrated_on_the_bots_own_papers(
    db: Database,
) -> None:
    catalog = load_catalog()  # the bundled one: sets have topics and rise off the floor
    clock = Clock(START)
    ctx = Context(uow=db.uow, catalog=catalog, clock=clock)
    fl = positives("federated-learning")
    await ingest(db, catalog, clock, *fl[:5])  # a new deployment: five papers stored
    ids = [p.arxiv_id for p in fl[:5]]
    assert (await say(ctx, "/follow like " + " ".join(ids))).startswith("Now following")
    tag = like_tag(ids)
    made = await stored_set(db, tag)
    assert made.calibrated_on == 0 and made.calibrated_at == START  # on the bundled day
    assert await recalibrate_due(db.uow, catalog, clock()) == 0  # too few of its own

    clock.advance(days=1)
    stored = listing(MIN_BACKGROUND + 20)
    jobs = Jobs(db, StoringPoller(db, catalog, clock, stored), None, catalog, clock)
    await jobs.poll()  # stores the listing, then recalibrates in its after-poll step
    again = await stored_set(db, tag)
    assert again.calibrated_on == len(stored) + 5 and again.calibrated_at == clock()
    async with db.uow() as uow:
        everything = await uow.papers.latest(None, limit=BACKGROUND_PAPERS)
    profile = LikeProfile.from_json(made.profile, made.threshold)
    expected = recalibrate(profile, ids, described_background(everything, catalog))
    assert again.threshold == expected.threshold >= profile.own_level > 0
    assert again.profile == made.profile  # the threshold alone changes
    listed = await say(ctx, "/list")
    assert f"(match score above {again.threshold:.2f}" in listed

    clock.advance(days=3)
    assert await recalibrate_due(db.uow, catalog, clock()) == 0  # not due in a week
    clock.advance(seconds=(RECALIBRATE_AFTER.total_seconds() - 3 * 86400))
    assert await recalibrate_due(db.uow, catalog, clock()) == 1
    assert (await stored_set(db, tag)).calibrated_at == clock()

    async with db.uow() as uow:  # a set no active chat follows is left alone
        chat = await uow.chats.get_or_create(CONSOLE_CHAT)
        await uow.chats.set_active(chat.id, False)
        await uow.commit()
    clock.advance(days=30)
    assert await recalibrate_due(db.uow, catalog, clock()) == 0


async def columns(db: Database) -> set[str]:
    async with db.engine.connect() as conn:
        found = await conn.run_sync(lambda c: sa.inspect(c).get_columns("like_sets"))
    return {c["name"] for c in found}


async def test_the_migration_adds_the_calibration_and_old_sets_count_as_bundled(
    db: Database,
) -> None:
    assert {"calibrated_at", "calibrated_on"} <= await columns(db)
    await db.downgrade("0017")
    assert not {"calibrated_at", "calibrated_on"} & await columns(db)
    async with db.engine.begin() as conn:  # a set stored before 0018
        await conn.execute(
            sa.text(
                "INSERT INTO like_sets (tag, arxiv_ids, profile, threshold, created_at) "
                "VALUES ('l:old', '[\"2401.00001\"]', '{}', 0.3, :at)"
            ),
            {"at": START},
        )
    await db.upgrade()
    old = await stored_set(db, "l:old")
    assert (old.calibrated_on, old.calibrated_at, old.threshold) == (0, None, 0.3)
    async with db.uow() as uow:
        await uow.like_sets.recalibrated("l:old", 0.4, START, 2000)
        await uow.like_sets.recalibrated("l:none", 0.4, START, 2000)  # no such set: nothing
        await uow.commit()
    assert await stored_set(db, "l:old") == replace(
        old, threshold=0.4, calibrated_at=START, calibrated_on=2000
    )
    async with db.uow() as uow:
        assert await uow.like_sets.get("l:none") is None
