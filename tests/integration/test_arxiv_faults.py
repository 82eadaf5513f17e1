"""arXiv faults and hostile answers, end to end: the real httpx client against the local
fake arXiv (tests/support/arxiv_server.py), a real database, injected sleeps and clocks.

Nothing here waits for real backoff: every wait goes to an injected `sleep`; the only
real wait is a poll timeout of a few milliseconds against a sleep that never ends.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator, Callable
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path

import httpx
import pytest

from bot.arxiv.client import USER_AGENT, ArxivClient, RequestSpacer
from bot.arxiv.responses import ArxivHTTPError, ArxivTooLargeError
from bot.config import Settings
from bot.services.poll import Poller
from handlers.status import describe
from storage.database import Database
from storage.politeness import REQUESTS_SOURCE, DatabaseRequestStamp
from tests.support.arxiv_server import Canned, FakeArxiv, gzip_bomb, serve_fake_arxiv
from tests.support.oai_repository import OaiRepository, real_records, record_categories

ARXIV = Path(__file__).parents[1] / "fixtures" / "arxiv"
SMALL_RSS = (ARXIV / "rss/msudars_laya-reader/arxiv_rss.xml").read_bytes()
LIST_RECORDS = (ARXIV / "oai_pmh/mikesaelim_arXivOAIHarvester/ListRecordsResponse.xml").read_bytes()
NOW = datetime(2026, 9, 25, 1, 0, tzinfo=UTC)
DAYS = [date(2026, 9, 18) + timedelta(days=n) for n in range(5)]  # five finished days
MIB = 1024 * 1024
GUARD = 60  # seconds: turns a hang of the old code into a failure


class Sleeps:
    """Stands in for asyncio.sleep: records what would have been waited, and moves `now`."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.now = 1000.0

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def fake() -> AsyncIterator[FakeArxiv]:
    with serve_fake_arxiv() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def _settings(
    fake: FakeArxiv, categories: tuple[str, ...] = ("cs.LG", "cs.AI"), **extra
) -> Settings:
    return Settings(
        ARXIV_RSS_URL=fake.url + "/rss/",
        ARXIV_OAI_URL=fake.url + "/oai",
        ARXIV_CATEGORIES=",".join(categories),
        ARXIV_MIN_REQUEST_INTERVAL=0,
        **extra,
    )


@pytest.fixture
async def make_poller(
    db: Database, fake: FakeArxiv, sleeps: Sleeps
) -> AsyncIterator[Callable[..., Poller]]:
    made: list[Poller] = []

    def make(
        categories: tuple[str, ...] = ("cs.LG", "cs.AI"),
        *,
        sleep: Callable | None = None,
        timeout: float = 900.0,
    ) -> Poller:
        settings = _settings(fake, categories)
        http = httpx.AsyncClient(headers={"User-Agent": USER_AGENT}, timeout=5.0)
        client = ArxivClient(settings, http, sleep=sleep or sleeps, attempts=4)
        poller = Poller(
            client,
            db.uow,
            settings.arxiv_categories,
            oai_url=settings.arxiv_oai_url,
            clock=lambda: NOW,
            timeout=timeout,
        )
        made.append(poller)
        return poller

    yield make
    for poller in made:
        await poller.aclose()


async def _status(db: Database) -> str:
    async with db.uow() as uow:
        return "\n".join(describe(await uow.poll_state.all(), await uow.papers.count(), NOW))


async def _ids(db: Database, ids: set[str]) -> set[str]:
    async with db.uow() as uow:
        return {i for i in ids if await uow.papers.get(i) is not None}


# --- row 8: size of the body ---------------------------------------------------------------


@cache
def _bomb() -> bytes:
    return gzip_bomb(400)  # 400 MiB of zeros in about 400 KiB, as in the report


async def test_a_gzip_bomb_is_refused_after_reading_little(fake: FakeArxiv, sleeps) -> None:
    bomb = _bomb()
    fake.add("/rss/cs.AI", Canned(bomb, headers={"Content-Encoding": "gzip"}))
    client = ArxivClient(
        _settings(fake, ("cs.AI",), ARXIV_MAX_RESPONSE_MIB=1), sleep=sleeps, attempts=4
    )
    tracemalloc.start()
    try:
        with pytest.raises(ArxivTooLargeError, match="larger than 1 MiB") as caught:
            await client.fetch_rss()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await client.aclose()
    # It stopped at the first decoded read: a fraction of the compressed bytes came off
    # the wire, and memory stayed far below the 400 MiB the body inflates to.
    assert caught.value.downloaded < len(bomb) / 3
    assert peak < 150 * MIB
    assert len(fake.requests) == 1  # too large is not a transient fault: no retry


async def test_a_declared_oversized_body_is_not_read_at_all(fake: FakeArxiv, sleeps) -> None:
    fake.add("/rss/cs.AI", Canned(b"<rss>" + b" " * (2 * MIB) + b"</rss>"))
    client = ArxivClient(_settings(fake, ("cs.AI",), ARXIV_MAX_RESPONSE_MIB=1), sleep=sleeps)
    try:
        with pytest.raises(ArxivTooLargeError) as caught:
            await client.fetch_rss()
    finally:
        await client.aclose()
    assert caught.value.downloaded == 0


async def test_a_body_under_the_cap_is_read_whole(fake: FakeArxiv, sleeps) -> None:
    assert len(SMALL_RSS) < MIB
    fake.add("/rss/cs.AI", Canned(SMALL_RSS))
    client = ArxivClient(_settings(fake, ("cs.AI",), ARXIV_MAX_RESPONSE_MIB=1), sleep=sleeps)
    try:
        fetched = await client.fetch_rss()
    finally:
        await client.aclose()
    assert fetched.body == SMALL_RSS and fetched.feed and len(fetched.feed.papers) == 4


def test_the_default_cap_leaves_room_for_the_largest_fixture() -> None:
    largest = max(p.stat().st_size for p in ARXIV.rglob("*.xml"))
    assert largest * 10 < Settings().arxiv_max_response_mib * MIB


# --- row 8: Retry-After --------------------------------------------------------------------


async def test_a_huge_retry_after_holds_back_at_most_an_hour(fake: FakeArxiv, sleeps) -> None:
    fake.add(
        "/rss/cs.AI",
        Canned(b"", 503, headers={"Retry-After": "99999999"}, content_type="text/plain"),
        Canned(SMALL_RSS),
    )
    spacer = RequestSpacer(3.0, clock=sleeps.clock, sleep=sleeps)
    client = ArxivClient(_settings(fake, ("cs.AI",)), spacer=spacer, sleep=sleeps)
    try:
        with pytest.raises(ArxivHTTPError, match="asked us to wait 99999999 s"):
            await client.fetch_rss()  # too long to wait inside one call: given up
        await client.fetch_rss()  # the next request waits, but not for three years
    finally:
        await client.aclose()
    assert sleeps.calls == [3600.0]


async def test_a_huge_retry_after_is_waited_for_at_most_an_hour(fake: FakeArxiv, sleeps) -> None:
    fake.add(
        "/rss/cs.AI",
        Canned(b"", 429, headers={"Retry-After": "99999999"}, content_type="text/plain"),
        Canned(SMALL_RSS),
    )
    spacer = RequestSpacer(3.0, clock=sleeps.clock, sleep=sleeps)
    client = ArxivClient(
        _settings(fake, ("cs.AI",)), spacer=spacer, sleep=sleeps, max_retry_after=10**9
    )
    try:
        fetched = await client.fetch_rss()
    finally:
        await client.aclose()
    assert fetched.feed is not None
    assert sleeps.calls == [3600.0]  # the retry's wait; the spacer's hold-off is spent by then


# --- row 8: a poll that never ends -----------------------------------------------------------


async def _forever(seconds: float) -> None:
    await asyncio.Event().wait()


async def test_a_stalled_poll_times_out_and_status_says_so(db, fake, make_poller) -> None:
    fake.add(
        "/rss/cs.LG+cs.AI",
        Canned(b"", 503, headers={"Retry-After": "5"}, content_type="text/plain"),
    )
    poller = make_poller(sleep=_forever, timeout=0.05)
    outcome = await asyncio.wait_for(poller.poll_daily(), GUARD)
    assert outcome.status == "failed" and "ARXIV_POLL_TIMEOUT" in (outcome.error or "")
    assert "FAILED: arXiv did not answer within 0.05 s" in await _status(db)


async def test_a_stalled_harvest_day_times_out(db, fake, make_poller) -> None:
    fake.add("/oai", Canned(b"", 503, headers={"Retry-After": "5"}, content_type="text/plain"))
    poller = make_poller(("nucl-th",), sleep=_forever, timeout=0.05)
    with pytest.raises(ArxivHTTPError, match=r"harvest of 2026-09-20: .*ARXIV_POLL_TIMEOUT"):
        await asyncio.wait_for(poller.harvest(date(2026, 9, 20), date(2026, 9, 21)), GUARD)
    async with db.uow() as uow:
        state = await uow.poll_state.get(poller.oai_source)
    assert state.watermark is None and "ARXIV_POLL_TIMEOUT" in state.last_error


# --- row 9: malformed input reaches /status, and one bad record costs only itself -------------


async def test_an_unknown_encoding_is_a_failed_poll_in_status(db, fake, make_poller) -> None:
    bogus = SMALL_RSS.replace(b"encoding='UTF-8'", b"encoding='bogus-enc'")
    fake.add("/rss/cs.LG+cs.AI", Canned(bogus))
    outcome = await make_poller().poll_daily()
    assert outcome.status == "failed" and "bogus-enc" in (outcome.error or "")
    status = await _status(db)
    assert "FAILED: unsupported XML encoding" in status and ": OK." not in status


async def test_a_huge_version_costs_one_record_not_the_page(db, fake, make_poller) -> None:
    page = LIST_RECORDS.replace(
        b'<resumptionToken cursor="0" completeListSize="58011">726959|1001</resumptionToken>', b""
    ).replace(b'<version version="v1">', b'<version version="v99999999999999999999">', 1)
    fake.add("/oai", Canned(page))
    poller = make_poller(("nucl-ex", "nucl-th", "math.AG", "gr-qc", "astro-ph"))
    await poller.harvest(date(2026, 9, 22), date(2026, 9, 22))
    ids = {"0704.0471", "0704.0874", "0704.1109", "0704.1114", "0704.1586"}
    assert await _ids(db, ids) == ids - {"0704.0471"}  # the first record held the v9999...


async def test_a_failure_to_store_is_a_failed_poll_in_status(
    db, fake, make_poller, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken_store(*args, **kwargs):
        raise ValueError("a followed query no longer parses")

    monkeypatch.setattr("bot.services.poll.store", broken_store)
    fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS))
    outcome = await make_poller().poll_daily()
    assert outcome.status == "failed" and "no longer parses" in (outcome.error or "")
    assert "FAILED: storing the listing failed: a followed query" in await _status(db)


def _paperwatch(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "PAPERWATCH_LOG_LEVEL": "WARNING"},
        timeout=120,
    )


def test_ingest_file_answers_hostile_files_in_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.xml"
    bogus.write_bytes(SMALL_RSS.replace(b"encoding='UTF-8'", b"encoding='bogus-enc'"))
    huge = tmp_path / "huge.xml"
    huge.write_bytes(
        LIST_RECORDS.replace(
            b'<version version="v1">', b'<version version="v' + b"9" * 20 + b'">', 1
        )
    )
    refused = _paperwatch("ingest", "--file", str(bogus), cwd=tmp_path)
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr and "unsupported XML encoding" in refused.stderr
    stored = _paperwatch("ingest", "--file", str(huge), cwd=tmp_path)
    assert stored.returncode == 0, stored.stderr
    assert "Traceback" not in stored.stderr
    assert "5 papers read" in stored.stdout  # 6 records, the first one's v1 made absurd


# --- "also seen": a backfill under faults completes in one run ----------------------------------


def _repository(faults: dict) -> OaiRepository:
    return OaiRepository(real_records(), DAYS, page_size=2, faults=faults)


async def test_backfill_under_faults_stores_every_paper_in_one_run(
    db, fake, make_poller, sleeps
) -> None:
    repository = _repository(
        {
            (DAYS[1], 1): "truncated",
            (DAYS[2], 0): "html",
            (DAYS[3], 1): "bad_token",
            (DAYS[4], 1): "truncated",
        }
    )
    fake.responder = repository
    records = real_records()
    poller = make_poller(record_categories(records))
    await poller.harvest(DAYS[0], DAYS[-1])
    everything = {r.arxiv_id for r in records}
    assert len(everything) == 26
    assert await _ids(db, everything) == everything
    assert not repository.faults  # every fault was served...
    assert sorted(f for *_, f in repository.served if f != "ok") == [
        "bad_token",
        "html",
        "truncated",
        "truncated",
    ]
    assert len(sleeps.calls) == 3  # ...the three unreadable pages retried after a backoff
    async with db.uow() as uow:
        state = await uow.poll_state.get(poller.oai_source)
    assert state.watermark == DAYS[-1].isoformat() and state.last_error is None


async def test_an_expired_token_restarts_the_set_from_its_first_page(db, fake, make_poller) -> None:
    repository = _repository({(DAYS[0], 1): "bad_token"})
    fake.responder = repository
    records = real_records()
    poller = make_poller(record_categories(records))
    await poller.harvest(DAYS[0], DAYS[0])
    served = [(s, p, f) for d, s, p, f in repository.served if d == DAYS[0]]
    bad = served.index(next(x for x in served if x[2] == "bad_token"))
    assert served[bad + 1] == (served[bad][0], 0, "ok")  # the same set, from page 0
    assert await _ids(db, repository.ids_on(DAYS[0])) == repository.ids_on(DAYS[0])


async def test_a_page_that_stays_broken_stops_after_the_retries(
    db, fake, make_poller, sleeps
) -> None:
    class Broken(OaiRepository):
        def _respond(self, seen):
            self.faults[(DAYS[2], 0)] = "truncated"
            return super()._respond(seen)

    repository = Broken(real_records(), DAYS)
    fake.responder = repository
    poller = make_poller(record_categories(real_records()))
    with pytest.raises(ArxivHTTPError, match="invalid XML"):
        await poller.harvest(DAYS[0], DAYS[-1])
    truncated = [x for x in repository.served if x[3] == "truncated"]
    assert len(truncated) == 4  # the client's attempts, then it gives up
    async with db.uow() as uow:
        state = await uow.poll_state.get(poller.oai_source)
    assert state.watermark == DAYS[1].isoformat()  # resumes at the broken day
    assert state.last_error.startswith(f"{DAYS[2]}: invalid XML")


# --- "also seen": the spacing holds across processes ---------------------------------------


class WallClock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


async def test_a_second_process_waits_out_the_first_ones_interval(db, fake) -> None:
    """Two clients, each with its own spacer (as two processes), share one database."""
    fake.add("/rss/cs.AI", Canned(SMALL_RSS))
    wall = WallClock()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        wall.now += timedelta(seconds=seconds)

    def client() -> ArxivClient:
        spacer = RequestSpacer(
            3.0,
            clock=lambda: wall.now.timestamp(),
            sleep=sleep,
            shared=DatabaseRequestStamp(db.uow),
            wall=wall,
        )
        return ArxivClient(_settings(fake, ("cs.AI",)), spacer=spacer, sleep=sleep)

    first, second = client(), client()
    try:
        await first.fetch_rss()
        assert waits == []  # nobody asked before
        wall.now += timedelta(seconds=1)  # the first process dies; a new one starts
        await second.fetch_rss()
        assert waits == [2.0]  # the rest of the first one's 3 s
        wall.now += timedelta(seconds=10)
        await first.fetch_rss()
        assert waits == [2.0]  # long enough ago
    finally:
        await first.aclose()
        await second.aclose()
    async with db.uow() as uow:
        stamp = await uow.poll_state.get(REQUESTS_SOURCE)
    assert stamp.last_attempt_at == wall.now
    assert "arxiv:requests" not in await _status(db)


class Stamp:
    def __init__(self, last: datetime | None) -> None:
        self.value = last

    async def last(self) -> datetime | None:
        return self.value

    async def record(self, at: datetime) -> None:
        self.value = at


async def test_a_stamp_from_a_clock_ahead_costs_at_most_one_interval(sleeps) -> None:
    spacer = RequestSpacer(
        3.0,
        clock=sleeps.clock,
        sleep=sleeps,
        shared=Stamp(NOW + timedelta(hours=5)),
        wall=lambda: NOW,
    )
    await spacer.wait()
    assert sleeps.calls == [3.0]


def test_black_box_backfill_under_faults_completes_in_one_run(tmp_path: Path) -> None:
    """`paperwatch backfill` as a person runs it, against a fake arXiv injecting each fault
    once: one run stores every paper of the window (real, short backoff waits)."""
    today = datetime.now(UTC).date()
    days = [today - timedelta(days=n) for n in (3, 2, 1)]  # inside the window at any hour
    records = real_records()
    repository = OaiRepository(
        records,
        days,
        faults={(days[0], 1): "truncated", (days[1], 0): "html", (days[2], 1): "bad_token"},
    )
    with serve_fake_arxiv() as server:
        server.responder = repository
        result = subprocess.run(
            [sys.executable, "-m", "bot", "backfill", "--days", "5"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={
                "PATH": "/usr/bin:/bin",
                "PAPERWATCH_LOG_LEVEL": "WARNING",
                "ARXIV_OAI_URL": server.url + "/oai",
                "ARXIV_CATEGORIES": ",".join(record_categories(records)),
                "ARXIV_MIN_REQUEST_INTERVAL": "0",
            },
            timeout=300,
        )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "stopped" not in result.stderr
    assert sorted(f for *_, f in repository.served if f != "ok") == [
        "bad_token",
        "html",
        "truncated",
    ]
    # The records are old papers: stored, but as replacements (not new in this window).
    assert "26 older papers first seen in a new version (stored, not alerted)" in result.stdout

    async def stored() -> set[str]:
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'paperwatch.db'}")
        try:
            return await _ids(db, {r.arxiv_id for r in records})
        finally:
            await db.dispose()

    assert asyncio.run(stored()) == {r.arxiv_id for r in records}


async def test_a_broken_database_never_stops_a_request(tmp_path: Path, caplog) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'unmigrated.db'}")  # no poll_state table
    stamp = DatabaseRequestStamp(db.uow)
    try:
        assert await stamp.last() is None
        await stamp.record(NOW)  # logged, not raised
    finally:
        await db.dispose()
    assert "cannot record the last arXiv request time" in caplog.text
