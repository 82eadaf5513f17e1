"""Latency from arXiv's feed switching to a new listing to the alert: simulated nights.

    .venv/bin/python -m bench.bench_latency [--days 200] [--seed 18] [--interval 90]
                                            [--papers 300] [--backend sqlite|postgres]

Each simulated listing day, a local fake arXiv (127.0.0.1) switches its RSS feed from the
day before's listing to the new one at a moment drawn from a seeded RNG, uniformly over the
fast-polling window (the hour from 00:00 US Eastern, `bot.arxiv.calendar.fast_window`). The
bot's own fast-poll job, fired by its own trigger, polls with the real httpx client,
ingests into a fresh database and hands the alert to the outbox worker of the same process,
which sends it to a chat that follows the topic instantly. Time is simulated: it runs at
real speed while the bot works and jumps over the waits, so hundreds of nights take
seconds and the work of polling, storing and sending counts as it really takes.

Reports, over the days: the delay from the switch to the alert being enqueued (the outbox
row's stamp) and to its being sent (median, p95, max), and the requests a night made to
arXiv in the window (the politeness cost). The last line is JSON. Goals (issue 18):
median <= 5 min, p95 <= 10 min.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import statistics
import time
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import func, select

from bench.harness import fresh_database, verdict
from bot.adapters.console import ConsoleMessenger
from bot.arxiv.calendar import announcements_after, fast_window, listing_date
from bot.domain import Chat
from bot.scheduler import Jobs
from bot.services.deliver import Deliverer
from bot.topics.catalog import load_catalog
from storage.database import Database
from storage.models import OutboxRow
from tests.support.arxiv_server import serve_fake_arxiv
from tests.support.feed_switch import (
    SimClock,
    SwitchingFeed,
    follow_instantly,
    listing_rss,
    run_fast_polls,
    simulated_poller,
    switch_moment,
)

FIRST_ANNOUNCEMENT_AFTER = datetime(2027, 1, 4, 12, 0, tzinfo=UTC)
MATCHING = 3  # papers of each listing on the followed topic


class TimedConsole(ConsoleMessenger):
    """The terminal chat's messenger, noting when (simulated) each alert leaves."""

    def __init__(self, clock: SimClock) -> None:
        super().__init__(io.StringIO())
        self._clock = clock
        self.sent: list[datetime] = []

    async def deliver(self, chat: Chat, message: object) -> None:
        self.sent.append(self._clock())
        await super().deliver(chat, message)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def last_enqueued(db: Database) -> datetime:
    async with db.engine.connect() as conn:
        at = await conn.scalar(select(func.max(OutboxRow.created_at)))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


async def simulate(args: argparse.Namespace, url: str) -> dict[str, list[float]]:
    rng = random.Random(args.seed)
    catalog = load_catalog()
    announcements = announcements_after(FIRST_ANNOUNCEMENT_AFTER, limit=args.days + 1)
    listings = [listing_date(a) for a in announcements]
    db = Database(url)
    clock = SimClock(switch_moment(listings[0]) - timedelta(hours=1), flowing=True)
    console = TimedConsole(clock)
    rows: dict[str, list[float]] = {"enqueued": [], "sent": [], "requests": [], "switch": []}
    with serve_fake_arxiv() as fake:
        first = listing_rss(listings[0], 0, args.papers, MATCHING)
        feed = SwitchingFeed(clock, first, first, clock())
        fake.responder = feed
        poller = simulated_poller(fake, db, clock, catalog)
        deliverer = Deliverer(db.uow, {"console": console}, catalog, clock=clock, concurrency=1)
        jobs = Jobs(db, poller, deliverer, catalog, clock=clock)
        try:
            await follow_instantly(db)
            await jobs.poll()  # the first listing, stored the day before
            for number, listing in enumerate(listings[1:], start=1):
                await night(args, rng, jobs, feed, clock, console, db, listing, number, rows)
        finally:
            await poller.aclose()
            await db.dispose()
    return rows


async def night(
    args: argparse.Namespace,
    rng: random.Random,
    jobs: Jobs,
    feed: SwitchingFeed,
    clock: SimClock,
    console: TimedConsole,
    db: Database,
    listing: date,
    number: int,
    rows: dict[str, list[float]],
) -> None:
    """One night: the feed switches at a random moment of the window; the fast polls run."""
    start, end = fast_window(switch_moment(listing))
    feed.before, feed.after = feed.after, listing_rss(listing, number, args.papers, MATCHING)
    offset = rng.uniform(0, (end - start).total_seconds())
    feed.switch_at = start + timedelta(seconds=offset)
    sent_before, requests_before = len(console.sent), len(feed.log)
    clock.jump(start - timedelta(seconds=1))
    interval = timedelta(seconds=args.interval)
    await run_fast_polls(jobs, clock, interval, until=end + interval / 2)
    if len(console.sent) != sent_before + MATCHING:
        raise SystemExit(f"the listing of {listing} was not delivered in its window")
    rows["switch"].append(offset)
    rows["enqueued"].append((await last_enqueued(db) - feed.switch_at).total_seconds())
    rows["sent"].append((console.sent[sent_before] - feed.switch_at).total_seconds())
    rows["requests"].append(len(feed.log) - requests_before)


def describe(seconds: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(seconds), 1),
        "p95_s": round(percentile(seconds, 0.95), 1),
        "max_s": round(max(seconds), 1),
    }


async def run(args: argparse.Namespace) -> dict[str, object]:
    started = time.perf_counter()
    async with fresh_database(args.backend, "pw_latency") as url:
        rows = await simulate(args, url)
    enqueued, sent = describe(rows["enqueued"]), describe(rows["sent"])
    return {
        "days": len(rows["sent"]),
        "interval_s": args.interval,
        "papers_per_listing": args.papers,
        "backend": args.backend,
        "enqueued": enqueued,
        "sent": sent,
        "requests_per_night_mean": round(statistics.mean(rows["requests"]), 1),
        "requests_per_night_max": max(rows["requests"]),
        "goal_met": sent["median_s"] <= 300 and sent["p95_s"] <= 600,
        "wall_s": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=200, help="listing days to simulate")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--interval", type=float, default=90.0, help="ARXIV_FAST_POLL_INTERVAL")
    parser.add_argument("--papers", type=int, default=300, help="papers in each listing")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    if not 1 <= args.days <= 1000 or args.papers < MATCHING or args.interval <= 0:
        parser.error("--days must be 1-1000, --papers at least 3, --interval positive")
    figures = asyncio.run(run(args))
    enqueued, sent = figures["enqueued"], figures["sent"]
    print(f"simulated nights:            {figures['days']} ({args.backend}, seed {args.seed})")
    print(f"fast-poll interval:          {args.interval:g} s; {args.papers} papers a listing")
    for name, row in (("enqueued", enqueued), ("sent", sent)):
        print(
            f"switch -> alert {name + ':':<10}  median {row['median_s'] / 60:.2f} min, "
            f"p95 {row['p95_s'] / 60:.2f} min, max {row['max_s'] / 60:.2f} min"
        )
    print(f"goal (median <= 5, p95 <= 10 min): {verdict(bool(figures['goal_met']))}")
    print(
        f"requests to arXiv a night:   {figures['requests_per_night_mean']} on average, "
        f"{figures['requests_per_night_max']} at most (fast polls in the window)"
    )
    print(f"wall time:                   {figures['wall_s']} s")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
