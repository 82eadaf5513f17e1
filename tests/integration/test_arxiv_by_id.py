"""arXiv's papers by id (`bot.arxiv.by_id`), the real httpx client against the fake arXiv:
one request per 50 ids with the id list, unknown and withdrawn ids left out, the polite
spacing shared with every other arXiv request through the database, and faults turned into
`PaperLookupError` after the client's retries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.arxiv.by_id import ArxivLookup, paper_lookup
from bot.arxiv.client import ArxivClient
from bot.config import Settings
from bot.ports import PaperLookupError
from storage.database import Database
from storage.politeness import DatabaseRequestStamp
from tests.support.arxiv_server import Canned, FakeArxiv, serve_fake_arxiv

API = Path(__file__).parents[1] / "fixtures" / "arxiv" / "api"
ATTENTION = (API / "dcondrey_zotero-validate" / "arxiv_id_list_1706.03762.xml").read_bytes()


async def no_sleep(seconds: float) -> None:
    return None


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    with serve_fake_arxiv() as server:
        yield server


async def test_ids_are_asked_fifty_at_a_time_and_unknown_ones_left_out(fake: FakeArxiv) -> None:
    fake.add("/api/query", Canned(ATTENTION))
    settings = Settings(ARXIV_MIN_REQUEST_INTERVAL=0)
    client = ArxivClient(settings)
    try:
        lookup = ArxivLookup(client, fake.url + "/api/query")
        ids = ["1706.03762", *(f"2401.{n:05d}" for n in range(60))]
        found = await lookup.papers([*ids, "1706.03762"])
    finally:
        await client.aclose()
    assert [p.arxiv_id for p in found] == ["1706.03762"]
    asked = [seen.query["id_list"][0].split(",") for seen in fake.requests]
    assert [len(a) for a in asked] == [50, 11] and asked[0][0] == "1706.03762"
    assert [seen.query["max_results"] for seen in fake.requests] == [["50"], ["11"]]


async def test_the_spacing_is_shared_through_the_database(fake: FakeArxiv, db: Database) -> None:
    fake.add("/api/query", Canned(ATTENTION))
    settings = Settings(ARXIV_MIN_REQUEST_INTERVAL=0.4, ARXIV_API_URL=fake.url + "/api/query")
    async with paper_lookup(settings, DatabaseRequestStamp(db.uow)) as first:
        await first.papers(["1706.03762"])
    async with paper_lookup(settings, DatabaseRequestStamp(db.uow)) as second:  # a new process
        started = time.monotonic()
        await second.papers(["1706.03762"])
    assert time.monotonic() - started >= 0.3
    assert fake.requests[1].at - fake.requests[0].at >= 0.35


@pytest.mark.parametrize(
    "answers",
    [
        [Canned(b"busy", 503, content_type="text/plain")] * 3,
        [Canned(b"<html>not a feed</html>", content_type="text/html")] * 3,
        [Canned(b"bad id", 400, content_type="text/plain")],
    ],
)
async def test_faults_are_one_lookup_error(fake: FakeArxiv, answers: list[Canned]) -> None:
    fake.add("/api/query", *answers)
    client = ArxivClient(Settings(ARXIV_MIN_REQUEST_INTERVAL=0), sleep=no_sleep, attempts=3)
    try:
        with pytest.raises(PaperLookupError, match="arXiv could not be asked") as error:
            await ArxivLookup(client, fake.url + "/api/query").papers(["1706.03762"])
    finally:
        await client.aclose()
    assert "\n" not in str(error.value)
    assert len(fake.requests) == len(answers)


async def test_an_unreachable_arxiv_is_one_lookup_error(closed_port: int) -> None:
    client = ArxivClient(Settings(ARXIV_MIN_REQUEST_INTERVAL=0), sleep=no_sleep)
    try:
        with pytest.raises(PaperLookupError, match="cannot reach arXiv"):
            await ArxivLookup(client, f"http://127.0.0.1:{closed_port}/api/query").papers(["1"])
    finally:
        await client.aclose()
