"""Keeping the index complete: the daily RSS poll, and OAI-PMH catch-up and backfill.

Every source has a row in `poll_state`. Its watermark moves only in the transaction
that stores the papers it covers, so a crash or a bad response repeats work and never
skips it; storing is idempotent, so repeating is harmless.

Faults: the client retries what is transient (5xx, resets, a body cut short, an HTML
page in place of the feed); an expired OAI-PMH resumption token restarts that set's
harvest from its first page. One poll, and one harvested day, may take at most
`timeout` seconds (ARXIV_POLL_TIMEOUT) however the server dribbles. Whatever fails
is recorded in the source's `last_error`, which `/status` shows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Literal

from bot.arxiv.calendar import estimated_listing_date
from bot.arxiv.categories import in_categories
from bot.arxiv.client import ArxivClient
from bot.arxiv.parse import Feed, FeedError, OaiError
from bot.arxiv.responses import (
    ArxivBusyError,
    ArxivHTTPError,
    ArxivTooLargeError,
    ArxivUnreachableError,
)
from bot.domain import AnnounceType, Paper, PollState
from bot.metrics import Metrics
from bot.ports import UnitOfWork
from bot.services.ingest import IngestResult, store
from bot.topics.catalog import Catalog

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
Status = Literal["stored", "unchanged", "no_mailing", "failed"]

# Backfill and catch-up look at most this far back through OAI-PMH in one go.
MAX_CATCH_UP_DAYS = 14
# A first version submitted this many days before a harvested day still counts as new.
NEW_PAPER_SLACK = timedelta(days=4)
# How often one day's harvest of one set starts again after an expired resumption token.
TOKEN_RESTARTS = 2


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class PollOutcome:
    source: str
    status: Status
    announced: date | None = None
    new: int = 0
    updated: int = 0
    error: str | None = None


def oai_sets(categories: Sequence[str]) -> tuple[str, ...]:
    """OAI-PMH sets covering the categories: cs.AI -> cs, stat.ML -> stat, hep-th ->
    physics:hep-th."""
    sets: list[str] = []
    for category in categories:
        archive = category.split(".")[0]
        name = archive if archive in _TOP_LEVEL_SETS else f"physics:{archive}"
        if name not in sets:
            sets.append(name)
    return tuple(sets)


_TOP_LEVEL_SETS = frozenset({"cs", "econ", "eess", "math", "q-bio", "q-fin", "stat", "physics"})


class Poller:
    """Fetches, parses and stores; one instance per process, sharing one ArxivClient."""

    def __init__(
        self,
        client: ArxivClient,
        uow_factory: Callable[[], UnitOfWork],
        categories: Sequence[str],
        *,
        oai_url: str,
        catalog: Catalog | None = None,
        clock: Clock = _utcnow,
        timeout: float = 900.0,
        metrics: Metrics | None = None,
    ) -> None:
        self._client = client
        self.metrics = metrics or Metrics()
        self._timeout = timeout
        self._uow = uow_factory
        self._categories = tuple(categories)
        self._oai_url = oai_url
        self._catalog = catalog
        self._clock = clock
        self.rss_source = "rss:" + "+".join(self._categories)
        self.oai_source = "oai:" + "+".join(oai_sets(self._categories))

    async def aclose(self) -> None:
        await self._client.aclose()

    # --- daily announcements -------------------------------------------------------

    async def poll_daily(self) -> PollOutcome:
        """One RSS poll. Never raises for arXiv's faults: they become a `failed` outcome."""
        state = await self._state(self.rss_source)
        try:
            async with asyncio.timeout(self._timeout):
                fetched = await self._client.fetch_rss(
                    etag=state.etag, last_modified=state.last_modified
                )
        except (ArxivHTTPError, FeedError, TimeoutError) as exc:
            self.metrics.poll_failed("rss", failure_kind(exc))
            return await self._failed(state, _reason(exc, self._timeout))
        if fetched.not_modified or fetched.feed is None:
            await self._attempted(state, None)
            self.metrics.polled(self._clock(), 0)
            return PollOutcome(self.rss_source, "unchanged", state.last_announced)
        feed = fetched.feed
        if not feed.papers:
            log.info("arxiv poll source=%s: no mailing in the feed", self.rss_source)
            await self._attempted(state, None)
            self.metrics.polled(self._clock(), 0)
            return PollOutcome(self.rss_source, "no_mailing", state.last_announced)
        try:
            result = await self._store_listing(state, fetched.etag, fetched.last_modified, feed)
        except Exception as exc:  # the runner's one handler: record it for /status, go on
            log.exception("arxiv poll could not store source=%s", self.rss_source)
            self.metrics.poll_failed("rss", "store")
            return await self._failed(state, f"storing the listing failed: {exc}"[:300])
        self.metrics.polled(self._clock(), len(result.new))
        log.info(
            "arxiv poll source=%s announced=%s new=%d updated=%d",
            self.rss_source,
            feed.announced,
            len(result.new),
            len(result.updated),
        )
        return PollOutcome(
            self.rss_source, "stored", feed.announced, len(result.new), len(result.updated)
        )

    async def has_listing(self, day: date) -> bool:
        """Whether the daily listing dated `day`, or a later one, is stored."""
        state = await self._state(self.rss_source)
        return state.last_announced is not None and state.last_announced >= day

    async def _store_listing(
        self, state: PollState, etag: str | None, last_modified: str | None, feed: Feed
    ) -> IngestResult:
        """Store a daily listing and advance the RSS watermark in one transaction."""
        async with self._uow() as uow:
            result = await store(
                uow, feed.papers, self._catalog, self._clock(), metrics=self.metrics
            )
            same_day = feed.announced is not None and feed.announced == state.last_announced
            await uow.poll_state.save(
                replace(
                    state,
                    watermark=feed.announced.isoformat() if feed.announced else state.watermark,
                    etag=etag,
                    last_modified=last_modified,
                    last_announced=feed.announced or state.last_announced,
                    last_count=(state.last_count if same_day else 0) + len(result.new),
                    last_success_at=self._clock(),
                    last_attempt_at=self._clock(),
                    last_error=None,
                )
            )
            await uow.commit()
        return result

    async def _failed(self, state: PollState, error: str) -> PollOutcome:
        """Recorded on the source (shown by /status); reported by the caller, which knows
        how: the scheduled job logs it, `paperwatch ingest` prints it as its one line."""
        await self._attempted(state, error)
        return PollOutcome(state.source, "failed", state.last_announced, error=error)

    # --- OAI-PMH: catch-up after downtime, and backfill ------------------------------

    async def harvest(
        self,
        first: date,
        last: date,
        on_day: Callable[[date, IngestResult], None] | None = None,
    ) -> IngestResult:
        """Store every record of the configured categories with datestamps first..last.

        Goes day by day; a day's watermark moves only once all its pages are stored,
        so an interrupted harvest resumes at the first unfinished day.
        """
        state = await self._state(self.oai_source)
        done = date.fromisoformat(state.watermark) if state.watermark else None
        totals = IngestResult()
        day = first if done is None or done < first else done + timedelta(days=1)
        today = self._clock().date()
        while day <= last:
            result = await self._harvest_day_in_time(day)
            totals += result
            if day < today:  # today's records are still arriving: harvest it again later
                async with self._uow() as uow:
                    current = await self._state_in(uow, self.oai_source)
                    await uow.poll_state.save(
                        replace(current, watermark=day.isoformat(), last_error=None)
                    )
                    await uow.commit()
            if on_day:
                on_day(day, result)
            day += timedelta(days=1)
        return totals

    async def _harvest_day_in_time(self, day: date) -> IngestResult:
        """One day within the timeout; a failure is recorded on the OAI source, then raised
        (ArxivHTTPError or FeedError) for the caller to report."""
        try:
            async with asyncio.timeout(self._timeout):
                return await self._harvest_day(day)
        except TimeoutError as exc:
            error = ArxivHTTPError(f"harvest of {day}: {_reason(exc, self._timeout)}")
            await self._harvest_failed(day, error)
            raise error from exc
        except (ArxivHTTPError, FeedError) as exc:
            await self._harvest_failed(day, exc)
            raise

    async def _harvest_failed(self, day: date, error: Exception) -> None:
        self.metrics.poll_failed("oai", failure_kind(error))
        await self._attempted(await self._state(self.oai_source), f"{day}: {error}"[:300])

    async def catch_up(self) -> IngestResult | None:
        """After downtime, fill the gap since the last stored listing (up to 14 days)."""
        today = self._clock().date()
        rss = await self._state(self.rss_source)
        if rss.last_announced is None:
            return None  # a fresh install: `paperwatch backfill` fills history
        start = max(rss.last_announced - timedelta(days=1), today - timedelta(MAX_CATCH_UP_DAYS))
        if start >= today - timedelta(days=1):
            return None  # nothing was missed
        log.info("arxiv catch-up from=%s until=%s", start, today)
        return await self.harvest(start, today)

    async def _harvest_day(self, day: date) -> IngestResult:
        totals = IngestResult()
        for oai_set in oai_sets(self._categories):
            totals += await self._harvest_set(day, oai_set)
        return totals

    async def _harvest_set(self, day: date, oai_set: str) -> IngestResult:
        """Every page of one set's records for one day, each page stored as it comes.

        An expired resumption token (badResumptionToken) cannot be retried as it is:
        the set's harvest starts again from its first page, at most TOKEN_RESTARTS
        times. Pages stored before the restart come back as unchanged.
        """
        first = {
            "verb": "ListRecords",
            "metadataPrefix": "arXivRaw",
            "set": oai_set,
            "from": day.isoformat(),
            "until": day.isoformat(),
        }
        totals = IngestResult()
        params, restarts = first, TOKEN_RESTARTS
        while True:
            try:
                feed = (await self._client.get_feed(self._oai_url, params)).feed
            except OaiError as exc:
                if exc.code != "badResumptionToken" or restarts == 0:
                    raise
                restarts -= 1
                log.warning("oai token expired day=%s set=%s: restarting the set", day, oai_set)
                params = first
                continue
            if feed is None:  # no validators were sent, so never "not modified"
                raise ArxivHTTPError(f"{self._oai_url} answered 304 to a plain request")
            papers = [self._classify(p, day) for p in feed.papers if self._wanted(p)]
            async with self._uow() as uow:
                totals += await store(uow, papers, self._catalog, metrics=self.metrics)
                await uow.commit()
            if not feed.resumption_token:
                return totals
            params = {"verb": "ListRecords", "resumptionToken": feed.resumption_token}

    def _wanted(self, paper: Paper) -> bool:
        return in_categories(paper.categories, self._categories)

    @staticmethod
    def _classify(paper: Paper, day: date) -> Paper:
        """OAI-PMH gives no listing date: estimate it, and tell new papers from revisions."""
        if paper.submitted is None:
            return replace(paper, announce_type=AnnounceType.REPLACE)
        listed = estimated_listing_date(paper.submitted)
        is_new = listed >= day - NEW_PAPER_SLACK
        return replace(
            paper,
            announced=listed,
            announce_type=AnnounceType.NEW if is_new else AnnounceType.REPLACE,
        )

    # --- poll state ------------------------------------------------------------------

    async def _state(self, source: str) -> PollState:
        async with self._uow() as uow:
            return await self._state_in(uow, source)

    @staticmethod
    async def _state_in(uow: UnitOfWork, source: str) -> PollState:
        return await uow.poll_state.get(source) or PollState(source=source)

    async def _attempted(self, state: PollState, error: str | None) -> None:
        """Record an attempt that stored nothing; the watermark stays where it was."""
        async with self._uow() as uow:
            current = await self._state_in(uow, state.source)
            await uow.poll_state.save(
                replace(current, last_attempt_at=self._clock(), last_error=error)
            )
            await uow.commit()


def failure_kind(exc: Exception) -> str:
    """A poll failure's kind, the label of `paperwatch_poll_failures`."""
    kinds: tuple[tuple[type[Exception], str], ...] = (
        (TimeoutError, "timeout"),
        (ArxivUnreachableError, "unreachable"),
        (ArxivBusyError, "busy"),
        (ArxivTooLargeError, "too_large"),
        (ArxivHTTPError, "http"),
        (FeedError, "feed"),
    )
    return next((kind for cls, kind in kinds if isinstance(exc, cls)), "other")


def _reason(exc: Exception, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"arXiv did not answer within {timeout:g} s (ARXIV_POLL_TIMEOUT); gave up"
    return str(exc)
