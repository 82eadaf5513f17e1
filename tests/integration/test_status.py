"""/status tells "no mailing today" from "broken", on both databases."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

from bot.adapters.console import handle_line, render_reply
from bot.domain import Paper, PollState
from bot.services.ingest import load_sample_if_empty, store
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

SATURDAY = datetime(2026, 9, 26, 15, 0, tzinfo=UTC)


async def status_text(ctx: Context) -> str:
    reply = await handle_line("/status", REGISTRY, replace(ctx, clock=lambda: SATURDAY))
    return render_reply(reply)


async def test_status_on_a_fresh_install(ctx: Context) -> None:
    text = await status_text(ctx)
    assert "No arXiv announcement has been stored yet." in text
    assert "Next arXiv announcement expected Sun 27 Sep 2026 20:00 EDT" in text
    assert "the listing of Mon 28 Sep 2026" in text
    assert "arXiv's feed brings it at Mon 28 Sep 2026 00:00 EDT" in text
    assert "Papers in the index: 0." in text


async def test_status_says_when_only_the_sample_is_stored(db: Database, ctx: Context) -> None:
    await load_sample_if_empty(db.uow, ctx.catalog)
    text = await status_text(ctx)
    assert "Papers in the index: 30, all from the bundled sample" in text


async def test_status_after_an_ingest_from_a_file(db: Database, ctx: Context) -> None:
    """`paperwatch ingest --file` (or a backfill) stores arXiv papers without a poll of the
    daily feed; /status said "No arXiv announcement has been stored yet." beside "Papers in
    the index: 367", which read as if the ingest had failed."""
    paper = Paper(arxiv_id="2411.18279", title="A paper", announced=date(2024, 11, 28))
    async with db.uow() as uow:
        await store(uow, [paper], None, SATURDAY)
        await uow.commit()
    text = await status_text(ctx)
    assert "No arXiv announcement has been stored yet." not in text
    assert (
        "No daily announcement has been polled yet; the newest paper in the index, stored "
        "from a file or a backfill, was announced on Thu 28 Nov 2024." in text
    )
    assert "Papers in the index: 1." in text


async def test_status_after_a_good_and_a_failed_poll(db: Database, ctx: Context) -> None:
    good = PollState(
        source="rss:cs.AI",
        last_announced=date(2026, 9, 25),
        last_count=412,
        last_success_at=datetime(2026, 9, 25, 0, 31, tzinfo=UTC),
        last_attempt_at=datetime(2026, 9, 25, 0, 31, tzinfo=UTC),
    )
    async with db.uow() as uow:
        await uow.poll_state.save(good)
        await uow.commit()
    text = await status_text(ctx)
    assert "the listing of Fri 25 Sep 2026, 412 new paper(s)" in text
    assert "Last check Fri 25 Sep 2026 00:31 UTC: OK." in text

    async with db.uow() as uow:
        await uow.poll_state.save(
            replace(
                good,
                last_attempt_at=datetime(2026, 9, 26, 0, 30, tzinfo=UTC),
                last_error="https://rss.arxiv.org/rss/cs.AI answered HTTP 503",
            )
        )
        await uow.commit()
    text = await status_text(ctx)
    assert "FAILED: https://rss.arxiv.org/rss/cs.AI answered HTTP 503" in text
    assert "412 new paper(s)" in text  # the last good announcement is still reported
