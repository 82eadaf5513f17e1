"""Simulated arXiv evenings: a clock that jumps over idle time, a fake RSS feed that switches
from one listing to the next at a chosen moment, and the bot's real poller wired to both.

Used by tests/e2e/test_fast_poll.py and bench/bench_latency.py. The HTTP is real (httpx
against `tests.support.arxiv_server.FakeArxiv` on 127.0.0.1); only time is simulated.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from xml.sax.saxutils import escape

import httpx

from bot.arxiv.calendar import EASTERN, FEED_SWITCH
from bot.arxiv.client import USER_AGENT, ArxivClient, RequestSpacer
from bot.config import Settings
from bot.domain import ChatKind, ChatRef, Platform, SubscriptionKind
from bot.scheduler import FastPollTrigger, Jobs
from bot.services.poll import Poller
from bot.topics.catalog import Catalog
from storage.database import Database
from storage.politeness import DatabaseRequestStamp
from tests.support.arxiv_server import Canned, FakeArxiv, Seen

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
CATEGORIES = ("cs.LG", "cs.AI")
RSS_PATH = "/rss/" + "+".join(CATEGORIES)


class SimClock:
    """Simulated UTC time for the poller, the request spacer and the jobs.

    Frozen between jumps, or with `flowing`, running at real speed from the last jump, so
    that the work done between two jumps (a request, parsing, storing) takes its real time.
    Every wait (`sleep`) jumps over the time waited instead of passing it.
    """

    def __init__(self, start: datetime, *, flowing: bool = False) -> None:
        self._flowing = flowing
        self.jump(start)

    def __call__(self) -> datetime:
        if not self._flowing:
            return self._at
        return self._at + timedelta(seconds=time.perf_counter() - self._since)

    def jump(self, moment: datetime) -> None:
        """Time moves to `moment` (never back: a job started late runs late)."""
        moment = moment.astimezone(UTC)  # what the bot's clock gives (and SQLite keeps)
        current = getattr(self, "_at", None)
        self._at = moment if current is None else max(moment, self())
        self._since = time.perf_counter()

    def monotonic(self) -> float:
        return (self() - EPOCH).total_seconds()

    async def sleep(self, seconds: float) -> None:
        self.jump(self() + timedelta(seconds=max(0.0, seconds)))
        await asyncio.sleep(0)


def switch_moment(listing: date) -> datetime:
    """When arXiv's feed starts serving `listing` (00:00 Eastern on its date), in UTC."""
    return datetime.combine(listing, FEED_SWITCH, tzinfo=EASTERN).astimezone(UTC)


_ITEM = """<item><title>{title}</title><link>https://arxiv.org/abs/{id}</link>
<description>arXiv:{id}v1 Announce Type: new
Abstract: {abstract}</description>
<guid isPermaLink="false">oai:arXiv.org:{id}v1</guid><category>cs.LG</category>
<pubDate>{date}</pubDate><arxiv:announce_type>new</arxiv:announce_type>
<dc:creator>Ada Lovelace, Alan Turing</dc:creator></item>"""


def listing_rss(listing: date, number: int, papers: int = 3, matching: int | None = None) -> bytes:
    """An RSS listing dated `listing` of `papers` new papers, the first `matching` (all by
    default) on RL for LLM agents and the rest on other things. Ids are made from `number`
    (below 1,200; one a listing keeps every id new)."""
    stamp = format_datetime(datetime.combine(listing, FEED_SWITCH, tzinfo=EASTERN))
    prefix = f"{number // 12 % 100:02d}{number % 12 + 1:02d}"  # a valid YYMM per number
    on_topic = papers if matching is None else matching
    items = "".join(
        _ITEM.format(
            id=f"{prefix}.{n:05d}",
            title=escape(_TITLES[n >= on_topic].format(n=n, number=number)),
            abstract=_ABSTRACTS[n >= on_topic],
            date=stamp,
        )
        for n in range(papers)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss xmlns:arxiv="http://arxiv.org/schemas/atom"'
        ' xmlns:dc="http://purl.org/dc/elements/1.1/" version="2.0"><channel>'
        "<title>cs.LG, cs.AI updates on arXiv.org</title><link>http://rss.arxiv.org/rss/</link>"
        f"<description>updates</description><pubDate>{stamp}</pubDate>{items}</channel></rss>"
    ).encode()


_TITLES = (
    "Reinforcement learning for LLM agents, part {n} of listing {number}",
    "Sparse solvers for banded matrices, part {n} of listing {number}",
)
_ABSTRACTS = (
    "We train LLM agents with reinforcement learning (GRPO) on multi-turn web agent tasks.",
    "We study direct solvers for banded linear systems and their numerical stability.",
)


@dataclass
class Request:
    at: datetime  # simulated
    path: str
    status: int
    if_none_match: str | None


@dataclass
class SwitchingFeed:
    """What FakeArxiv answers on RSS_PATH: `before` until `switch_at` (simulated time), then
    `after`; each listing with its own ETag, and 304 to a request that names it. Other paths
    answer 404. Every request is logged with its simulated time."""

    clock: Callable[[], datetime]
    before: bytes
    after: bytes
    switch_at: datetime
    log: list[Request] = field(default_factory=list)

    def __call__(self, seen: Seen) -> Canned:
        now = self.clock()
        body = self.after if now >= self.switch_at else self.before
        etag = f'"{zlib.crc32(body):08x}"'
        asked = seen.headers.get("If-None-Match")
        if seen.path != RSS_PATH:
            canned = Canned(b"not here", 404, content_type="text/plain")
        elif asked == etag:
            canned = Canned(b"", 304, headers={"ETag": etag})
        else:
            canned = Canned(body, headers={"ETag": etag})
        self.log.append(Request(now, seen.path, canned.status, asked))
        return canned


def simulated_poller(
    fake: FakeArxiv, db: Database, clock: SimClock, catalog: Catalog, min_interval: float = 3.0
) -> Poller:
    """The bot's poller against the fake, with the request spacing (within the process and
    through the database, as in the app) kept in simulated time."""
    settings = Settings(
        ARXIV_RSS_URL=fake.url + "/rss/",
        ARXIV_OAI_URL=fake.url + "/oai",
        ARXIV_CATEGORIES=",".join(CATEGORIES),
        ARXIV_MIN_REQUEST_INTERVAL=min_interval,
    )
    spacer = RequestSpacer(
        min_interval,
        clock=clock.monotonic,
        sleep=clock.sleep,
        shared=DatabaseRequestStamp(db.uow),
        wall=clock,
    )
    http = httpx.AsyncClient(headers={"User-Agent": USER_AGENT}, timeout=10.0)
    client = ArxivClient(settings, http, spacer=spacer, sleep=clock.sleep)
    return Poller(
        client, db.uow, CATEGORIES, oai_url=settings.arxiv_oai_url, catalog=catalog, clock=clock
    )


async def follow_instantly(db: Database, slug: str = "rl-for-llm-agents") -> int:
    """A console chat that gets instant alerts on one catalog topic; returns its id."""
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(ChatRef(Platform.CONSOLE, "reader"), ChatKind.PRIVATE)
        await uow.chats.update(chat.id, digest_mode="instant")
        await uow.subscriptions.add(chat.id, SubscriptionKind.TOPIC, slug, slug, slug)
        await uow.commit()
    return chat.id


async def run_fast_polls(
    jobs: Jobs, clock: SimClock, interval: timedelta, until: datetime
) -> list[datetime]:
    """Fire the fast-poll job as the scheduler would (FastPollTrigger; a tick that comes
    while time has moved past it runs late, once) until `until`; returns the tick times."""
    trigger = FastPollTrigger(interval)
    ticks: list[datetime] = []
    while True:
        after = clock() if not ticks else max(clock(), ticks[-1] + timedelta(microseconds=1))
        moment = trigger.get_next_fire_time(None, after)
        if moment is None or moment >= until:
            return ticks
        clock.jump(moment)
        ticks.append(moment)
        await jobs.fast_poll()
