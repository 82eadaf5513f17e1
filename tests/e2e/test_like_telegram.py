"""A BibTeX file sent to the bot on Telegram: the real PTB Application against the fake Bot
API (document, getFile, the file's download), a real database, and the real arXiv client
asking a fake arXiv for the papers the index does not hold."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.arxiv.by_id import ArxivLookup
from bot.arxiv.client import ArxivClient
from bot.config import Settings
from bot.domain import ChatRef, Platform, SubscriptionKind
from bot.services.ingest import store
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.e2e.test_telegram import FAST_LIMITS, HOSTILE_TITLE, paper
from tests.support.arxiv_server import Canned, FakeArxiv, serve_fake_arxiv
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

TOKEN = "123456:TEST-token"
ALICE = 111
GROUP = -100777
API = "tests/fixtures/arxiv/api/dcondrey_zotero-validate/arxiv_id_list_1706.03762.xml"
STORED = replace(paper(1, HOSTILE_TITLE), arxiv_id="2610.00001")
BIB = b"""@article{hostile, eprint={2610.00001}, archivePrefix={arXiv}}
@inproceedings{vaswani, title={Attention Is All You Need},
  journal={arXiv preprint arXiv:1706.03762v7}, year={2017}}
@book{bishop, title={Pattern Recognition}}
"""


@dataclass
class Bot:
    fake: FakeTelegram
    arxiv: FakeArxiv
    db: Database

    async def send_file(self, chat_id: int, content: bytes, **kwargs: object) -> str:
        before = len(self.fake.messages_for(chat_id))
        self.fake.push_document(chat_id, "reading.bib", content, **kwargs)  # type: ignore[arg-type]
        await self.fake.async_wait_until(lambda f: len(f.messages_for(chat_id)) > before)
        return "\n".join(m.visible_text for m in self.fake.messages_for(chat_id)[before:])

    async def say(self, chat_id: int, text: str) -> str:
        before = len(self.fake.messages_for(chat_id))
        self.fake.push_message(chat_id, text)
        await self.fake.async_wait_until(lambda f: len(f.messages_for(chat_id)) > before)
        return "\n".join(m.visible_text for m in self.fake.messages_for(chat_id)[before:])

    async def likes(self) -> list[str]:
        async with self.db.uow() as uow:
            return [s.tag for s in await uow.like_sets.followed()]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
def arxiv() -> Iterator[FakeArxiv]:
    with serve_fake_arxiv() as fake:
        body = Path(API).read_bytes()
        fake.responder = lambda seen: Canned(body)
        yield fake


@pytest.fixture
async def bot(db: Database, catalog: Catalog, arxiv: FakeArxiv) -> AsyncIterator[Bot]:
    async with db.uow() as uow:
        await store(uow, [STORED], catalog, datetime.now(UTC))
        await uow.commit()
    with serve_fake_telegram() as fake:
        settings = Settings(
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=fake.base_url,
            ARXIV_MIN_REQUEST_INTERVAL=0,
            **FAST_LIMITS,
        )
        client = ArxivClient(settings)
        lookup = ArxivLookup(client, arxiv.url + "/api/query")
        ctx = Context(uow=db.uow, catalog=catalog, paper_lookup=lookup)
        adapter = TelegramAdapter(settings, REGISTRY, ctx)
        await adapter.start()
        try:
            yield Bot(fake, arxiv, db)
        finally:
            await adapter.stop()
            await client.aclose()


def asked(arxiv: FakeArxiv) -> list[list[str]]:
    return [seen.query.get("id_list", []) for seen in arxiv.requests]


async def test_a_bib_file_follows_papers_like_its_own(bot: Bot) -> None:
    answer = await bot.send_file(ALICE, BIB)
    assert answer.startswith("Now following Papers like “Agents <script> & "), answer
    assert "(2 papers; match score above 0." in answer
    assert asked(bot.arxiv) == [["1706.03762"]]  # only the paper not stored, once
    assert len(await bot.likes()) == 1
    listed = await bot.say(ALICE, "/list")
    assert "• Papers like “Agents <script> & " in listed and "(match score above 0." in listed
    again = await bot.send_file(ALICE, BIB)
    assert again.startswith("This chat already follows Papers like “Agents <script>")
    async with bot.db.uow() as uow:
        chat = await uow.chats.get(ChatRef(Platform.TELEGRAM, str(ALICE)))
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
    assert [s.kind for s in subs] == [SubscriptionKind.LIKE]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00binary", "That file is not text; send a BibTeX (.bib) file."),
        (b"@book{x, title={No preprint}}", "I found no arXiv id in that file"),
        (b"@misc{a, eprint={2609.99999}}", "arXiv has no paper 2609.99999."),
    ],
)
async def test_bad_files_get_one_line_and_change_nothing(
    bot: Bot, content: bytes, says: str
) -> None:
    answer = await bot.send_file(ALICE, content)
    assert answer.startswith(says) and "Nothing was changed." in answer
    assert await bot.likes() == []


async def test_a_huge_file_is_refused_without_fetching_it(bot: Bot) -> None:
    answer = await bot.send_file(ALICE, BIB, declared_size=5_000_000)
    assert answer.startswith("That file is too large (5,000,000 bytes)")
    assert bot.fake.downloads == [] and "getFile" not in bot.fake.calls
    assert await bot.likes() == []


async def test_in_a_group_only_an_admins_follow_caption_makes_a_file_ours(bot: Bot) -> None:
    bot.fake.push_document(GROUP, "shared.bib", BIB, chat_type="group", user_id=7)
    denied = await bot.send_file(GROUP, BIB, chat_type="group", caption="/follow", user_id=7)
    assert denied.startswith("Only the chat's administrators can change") and not await bot.likes()
    bot.fake.set_admins(GROUP, [7])
    answer = await bot.send_file(GROUP, BIB, chat_type="group", caption="/follow", user_id=7)
    assert answer.startswith("Now following Papers like")
    assert len(bot.fake.downloads) == 2  # the uncaptioned file was never fetched
