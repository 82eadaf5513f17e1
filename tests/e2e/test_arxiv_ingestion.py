"""Ingestion end to end: the real httpx client against a local replay server, a real database.

No sleeping: waits go to an injected `sleep` that records them, and request spacing is
checked with an injected clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest

from bot.arxiv.client import USER_AGENT, ArxivClient, RequestSpacer
from bot.config import Settings
from bot.services.poll import Poller
from storage.database import Database
from tests.support.arxiv_server import Canned, FakeArxiv, Seen, serve_fake_arxiv

ARXIV = Path(__file__).parents[1] / "fixtures" / "arxiv"
SMALL_RSS = (ARXIV / "rss/msudars_laya-reader/arxiv_rss.xml").read_bytes()
BIG_RSS = (ARXIV / "rss/jmmeus_aioarxiv_2024-11-28/rss_mock_feed.xml").read_bytes()
EMPTY_RSS = (ARXIV / "rss/jmmeus_aioarxiv_2024-11-28/empty_rss_mock_feed.xml").read_bytes()
ERROR_RSS = (ARXIV / "rss/jmmeus_aioarxiv_2024-11-28/error_rss_mock_feed.xml").read_bytes()
OAI = ARXIV / "oai_pmh/mikesaelim_arXivOAIHarvester"
NOW = datetime(2026, 9, 25, 1, 0, tzinfo=UTC)


class Sleeps:
    """Stands in for asyncio.sleep: records what would have been waited."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def fake() -> AsyncIterator[FakeArxiv]:
    with serve_fake_arxiv() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def make_poller(
    db: Database, fake: FakeArxiv, sleeps: Sleeps
) -> AsyncIterator[Callable[..., Poller]]:
    made: list[Poller] = []

    def make(categories: tuple[str, ...] = ("cs.LG", "cs.AI"), timeout: float = 5.0) -> Poller:
        settings = Settings(
            ARXIV_RSS_URL=fake.url + "/rss/",
            ARXIV_OAI_URL=fake.url + "/oai",
            ARXIV_CATEGORIES=",".join(categories),
            ARXIV_MIN_REQUEST_INTERVAL=0,
        )
        http = httpx.AsyncClient(headers={"User-Agent": USER_AGENT}, timeout=timeout)
        client = ArxivClient(settings, http, sleep=sleeps, attempts=4)
        poller = Poller(
            client,
            db.uow,
            settings.arxiv_categories,
            oai_url=settings.arxiv_oai_url,
            clock=lambda: NOW,
        )
        made.append(poller)
        return poller

    yield make
    for poller in made:
        await poller.aclose()


async def _papers(db: Database) -> int:
    async with db.uow() as uow:
        return await uow.papers.count()


async def _state(db: Database, source: str):
    async with db.uow() as uow:
        return await uow.poll_state.get(source)


# --- daily RSS ---------------------------------------------------------------------


async def test_daily_poll_stores_and_is_idempotent(db, fake, make_poller) -> None:
    fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS, headers={"ETag": '"v1"'}))
    poller = make_poller()
    first = await poller.poll_daily()
    assert (first.status, first.announced, first.new, first.updated) == (
        "stored",
        date(2026, 9, 24),
        3,  # 2 new + 1 cross; the replacement is stored but is not new
        0,
    )
    again = await poller.poll_daily()
    assert (again.status, again.new) == ("stored", 0)
    assert await _papers(db) == 4
    state = await _state(db, poller.rss_source)
    assert (state.last_announced, state.last_count, state.etag) == (date(2026, 9, 24), 3, '"v1"')
    assert fake.requests[1].headers.get("If-None-Match") == '"v1"'  # conditional GET


async def test_not_modified_costs_nothing(db, fake, make_poller) -> None:
    fake.add(
        "/rss/cs.LG+cs.AI",
        Canned(
            SMALL_RSS, headers={"ETag": '"v1"', "Last-Modified": "Thu, 24 Sep 2026 08:58:05 GMT"}
        ),
        Canned(b"", 304),
    )
    poller = make_poller()
    await poller.poll_daily()
    outcome = await poller.poll_daily()
    assert outcome.status == "unchanged"
    assert fake.requests[1].headers["If-Modified-Since"] == "Thu, 24 Sep 2026 08:58:05 GMT"
    assert (await _state(db, poller.rss_source)).last_count == 3


async def test_replacements_never_count_as_new(db, fake, make_poller) -> None:
    from bot.arxiv.parse import parse_feed
    from bot.domain import AnnounceType

    feed = parse_feed(BIG_RSS)
    replaced = next(p for p in feed.papers if p.announce_type is AnnounceType.REPLACE)
    crossed = next(p for p in feed.papers if p.announce_type is AnnounceType.CROSS)
    fake.add("/rss/cs.LG+cs.AI", Canned(BIG_RSS))
    outcome = await make_poller().poll_daily()
    assert (outcome.new, outcome.updated) == (926 + 9, 0)
    async with db.uow() as uow:
        assert await uow.papers.count() == 1504
        stored_replaced = await uow.papers.get(replaced.arxiv_id)
        stored_crossed = await uow.papers.get(crossed.arxiv_id)
    # A replaced paper seen for the first time has no listing date: it never counts as new.
    assert stored_replaced.announced is None and stored_replaced.version == replaced.version
    assert stored_crossed.announced == feed.announced


async def test_a_new_version_updates_without_counting(db, fake, make_poller) -> None:
    v1 = (
        SMALL_RSS.replace(b"2009.13987v3", b"2009.13987v1")
        .replace(b"Announce Type: replace", b"Announce Type: new")
        .replace(
            b"<arxiv:announce_type>replace</arxiv:announce_type>",
            b"<arxiv:announce_type>new</arxiv:announce_type>",
        )
    )
    fake.add("/rss/cs.LG+cs.AI", Canned(v1), Canned(SMALL_RSS))
    poller = make_poller()
    first = await poller.poll_daily()
    second = await poller.poll_daily()
    assert first.new == 4
    assert (second.new, second.updated) == (0, 1)
    async with db.uow() as uow:
        paper = await uow.papers.get("2009.13987")
    assert paper.version == 3 and paper.announced == date(2026, 9, 24)


@pytest.mark.parametrize(
    ("canned", "reason"),
    [
        (
            Canned(
                b"<html><body><h1>Service Unavailable</h1></body></html>", content_type="text/html"
            ),
            "HTML",
        ),
        (Canned(SMALL_RSS[: len(SMALL_RSS) // 2]), ""),
        (Canned(ERROR_RSS), ""),
        (Canned(b"nope", 404, content_type="text/plain"), "HTTP 404"),
    ],
    ids=["html-page", "truncated", "error-feed", "not-found"],
)
async def test_bad_responses_fail_without_moving_the_watermark(
    db, fake, make_poller, canned, reason
) -> None:
    fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS), canned)
    poller = make_poller()
    await poller.poll_daily()
    before = await _state(db, poller.rss_source)
    outcome = await poller.poll_daily()
    after = await _state(db, poller.rss_source)
    assert outcome.status == "failed" and reason in (outcome.error or "")
    assert after.last_error
    assert (after.watermark, after.last_announced, after.last_count) == (
        before.watermark,
        before.last_announced,
        before.last_count,
    )


async def test_an_empty_feed_is_no_mailing_not_an_error(db, fake, make_poller) -> None:
    fake.add("/rss/cs.LG+cs.AI", Canned(EMPTY_RSS))
    poller = make_poller()
    outcome = await poller.poll_daily()
    assert outcome.status == "no_mailing"
    assert (await _state(db, poller.rss_source)).last_error is None


async def test_429_waits_exactly_retry_after(db, fake, make_poller, sleeps) -> None:
    fake.add(
        "/rss/cs.LG+cs.AI",
        Canned(b"slow down", 429, headers={"Retry-After": "7"}, content_type="text/plain"),
        Canned(SMALL_RSS),
    )
    outcome = await make_poller().poll_daily()
    assert outcome.status == "stored"
    assert 7.0 in sleeps.calls
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    "failure",
    [
        Canned(b"busy", 503, content_type="text/plain"),
        Canned(b"oops", 502, content_type="text/plain"),
        Canned(action="reset"),
        Canned(action="hang", hang_seconds=1.5),
    ],
    ids=["503", "502", "reset", "timeout"],
)
async def test_transient_faults_back_off_and_recover(
    db, fake, make_poller, sleeps, failure
) -> None:
    fake.add("/rss/cs.LG+cs.AI", failure, failure, Canned(SMALL_RSS))
    outcome = await make_poller(timeout=0.5).poll_daily()
    assert outcome.status == "stored" and outcome.new == 3
    assert len(fake.requests) == 3
    assert len(sleeps.calls) == 2 and all(0 <= s <= 120 for s in sleeps.calls)


async def test_persistent_failure_gives_up_and_keeps_the_watermark(
    db, fake, make_poller, sleeps
) -> None:
    fake.add("/rss/cs.LG+cs.AI", Canned(b"busy", 503, content_type="text/plain"))
    poller = make_poller()
    outcome = await poller.poll_daily()
    assert outcome.status == "failed" and "503" in outcome.error
    assert len(fake.requests) == 4  # the configured number of attempts, then give up
    state = await _state(db, poller.rss_source)
    assert state.watermark is None and state.last_error
    assert await _papers(db) == 0


# --- request spacing (injected clock) ------------------------------------------------


async def test_requests_are_spaced_across_all_traffic() -> None:
    now = [100.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    spacer = RequestSpacer(3.0, clock=lambda: now[0], sleep=sleep)
    await spacer.wait()  # the first request goes at once
    now[0] += 1.0
    await spacer.wait()  # 1 s later: must wait 2 s more
    await spacer.wait()  # straight after: a full 3 s
    now[0] += 10.0
    await spacer.wait()  # after a pause: no wait
    spacer.hold_off(30.0)  # a Retry-After from the server
    await spacer.wait()
    assert waits == [2.0, 3.0, 30.0]


async def test_retry_after_holds_back_the_next_request_too(fake, sleeps) -> None:
    now = [0.0]

    async def sleep(seconds: float) -> None:
        sleeps.calls.append(seconds)
        now[0] += seconds

    settings = Settings(ARXIV_RSS_URL=fake.url + "/rss/", ARXIV_CATEGORIES="cs.AI")
    spacer = RequestSpacer(3.0, clock=lambda: now[0], sleep=sleep)
    fake.add(
        "/rss/cs.AI",
        Canned(b"", 503, headers={"Retry-After": "20"}, content_type="text/plain"),
        Canned(SMALL_RSS),
    )
    client = ArxivClient(settings, spacer=spacer, sleep=sleep)
    try:
        await client.fetch_rss()
        await client.fetch_rss()
    finally:
        await client.aclose()
    # 20 s for Retry-After (tenacity), and the spacer's 3 s gap before the next request.
    assert sleeps.calls == [20.0, 3.0]
    assert all(r.headers["User-Agent"].startswith("paperwatch/") for r in fake.requests)


# --- OAI-PMH harvest ----------------------------------------------------------------


def _oai_responder(page1: bytes, page2: bytes, no_records: bytes) -> Callable[[Seen], Canned]:
    def respond(seen: Seen) -> Canned:
        if "resumptionToken" in seen.query:
            return Canned(page2)
        if seen.query.get("set") == ["physics:nucl-ex"]:
            return Canned(page1)
        return Canned(no_records)

    return respond


async def test_harvest_pages_through_tokens_and_resumes(db, fake, make_poller) -> None:
    page1 = (OAI / "ListRecordsResponse.xml").read_bytes()
    # The second page repeats the first page's records (the same entry on two pages).
    page2 = page1.replace(
        b'<resumptionToken cursor="0" completeListSize="58011">726959|1001</resumptionToken>', b""
    )
    assert page2 != page1
    no_records = (OAI / "ErrorResponseNoRecordsMatch.xml").read_bytes()
    fake.responder = _oai_responder(page1, page2, no_records)
    poller = make_poller(categories=("nucl-ex", "nucl-th"))
    totals = await poller.harvest(date(2026, 9, 22), date(2026, 9, 23))
    # 0704.0471 (nucl-ex, nucl-th) and 0704.1586 (nucl-th): old papers, so not new.
    assert totals.new == () and await _papers(db) == 2
    tokens = [r.query.get("resumptionToken") for r in fake.requests]
    assert [t for t in tokens if t] == [["726959|1001"]] * 2
    assert fake.requests[0].query["from"] == ["2026-09-22"]
    assert fake.requests[0].query["metadataPrefix"] == ["arXivRaw"]
    assert (await _state(db, poller.oai_source)).watermark == "2026-09-23"

    # Run again over a longer range: it resumes after the last finished day.
    fake.requests.clear()
    await poller.harvest(date(2026, 9, 22), date(2026, 9, 24))
    assert {r.query["from"][0] for r in fake.requests if "from" in r.query} == {"2026-09-24"}


async def test_harvest_error_stops_before_the_failed_day(db, fake, make_poller) -> None:
    no_records = (OAI / "ErrorResponseNoRecordsMatch.xml").read_bytes()
    bad = (OAI / "ErrorResponseBadArgument.xml").read_bytes()

    def respond(seen: Seen) -> Canned:
        return Canned(bad if seen.query.get("from") == ["2026-09-23"] else no_records)

    fake.responder = respond
    poller = make_poller(categories=("nucl-th",))
    with pytest.raises(Exception, match="badArgument"):
        await poller.harvest(date(2026, 9, 22), date(2026, 9, 24))
    assert (await _state(db, poller.oai_source)).watermark == "2026-09-22"


async def test_expired_token_restarts_the_set(db, fake, make_poller) -> None:
    page1 = (OAI / "ListRecordsResponse.xml").read_bytes()
    bad_token = (OAI / "ErrorResponseBadResumptionToken.xml").read_bytes()
    page2 = page1.replace(
        b'<resumptionToken cursor="0" completeListSize="58011">726959|1001</resumptionToken>', b""
    )
    calls = {"token": 0}

    def respond(seen: Seen) -> Canned:
        if "resumptionToken" in seen.query:
            calls["token"] += 1
            return Canned(bad_token if calls["token"] == 1 else page2)
        return Canned(page1)

    fake.responder = respond
    poller = make_poller(categories=("nucl-th",))
    await poller.harvest(date(2026, 9, 22), date(2026, 9, 22))
    assert calls["token"] == 2 and await _papers(db) == 2


async def test_catch_up_after_downtime(db, fake, make_poller) -> None:
    fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS))
    no_records = (OAI / "ErrorResponseNoRecordsMatch.xml").read_bytes()
    fake.add("/oai", Canned(no_records))
    poller = make_poller()
    await poller.poll_daily()  # last listing: 2026-09-24
    # Ten days later, the bot starts again: OAI-PMH covers the gap, day by day.
    later = datetime(2026, 10, 4, 12, 0, tzinfo=UTC)
    poller._clock = lambda: later
    await poller.catch_up()
    days = sorted({r.query["from"][0] for r in fake.requests if "from" in r.query})
    assert days[0] == "2026-09-23" and days[-1] == "2026-10-04" and len(days) == 12


async def test_api_error_entry_is_passed_on(fake, sleeps) -> None:
    body = (ARXIV / "api/lukasschwab_arxiv.py/2026_recorded_json_bodies/").glob("id_abc_*.xml")
    fake.add("/api/query", Canned(next(body).read_bytes(), 400))
    client = ArxivClient(Settings(ARXIV_MIN_REQUEST_INTERVAL=0), sleep=sleeps)
    try:
        with pytest.raises(Exception, match=r"HTTP 400: .*incorrect id format for abc"):
            await client.get(fake.url + "/api/query", {"id_list": "abc"})
    finally:
        await client.aclose()
    assert len(fake.requests) == 1  # a 400 is not retried
