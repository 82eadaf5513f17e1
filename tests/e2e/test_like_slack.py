"""A BibTeX file shared with the app on Slack: the real slack_bolt app in HTTP mode gets the
signed `message` event (subtype file_share), fetches the file from the fake Slack's file
URL with the bot token, and follows papers like its entries; bad files get one line."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from bot.adapters.slack.commands import chat_key
from bot.adapters.slack.files import may_fetch
from bot.domain import ChatRef, Platform, SubscriptionKind
from tests.e2e.test_slack import ALICE, CHANNEL, HOSTILE, App, _text, app, catalog
from tests.e2e.test_telegram import paper
from tests.support.slack_server import event_body
from tests.support.slack_wire import DEFAULT_TEAM_ID

__all__ = ["app", "catalog"]  # the fixtures of test_slack, used here too

DM = "D0ALICEDM"
PAPERS = [
    replace(paper(n, f"{HOSTILE} federated learning {n}"), arxiv_id=f"2610.{n:05d}") for n in (1, 2)
]
BIB = b"""@misc{one, eprint={2610.00001}, archivePrefix={arXiv}}
@misc{two, url={https://arxiv.org/abs/2610.00002v3}}"""


def followed_chat() -> ChatRef:
    """The chat a DM with ALICE is stored as (`bot.adapters.slack.commands.origin`)."""
    return ChatRef(Platform.SLACK, chat_key(DEFAULT_TEAM_ID, DM, ALICE))


def shared(file: dict, *, channel: str = DM, text: str = "", user: str = ALICE) -> dict:
    return {
        "type": "message",
        "subtype": "file_share",
        "channel": channel,
        "channel_type": "im" if channel.startswith("D") else "channel",
        "user": user,
        "text": text,
        "files": [file],
        "ts": f"{time.time():.6f}",
    }


async def share(app: App, file: dict, **where: str) -> str:
    before = len(app.fake.posted)
    response = await app.post(event_body(shared(file, **where)))
    assert response.status_code == 200
    await app.fake.async_wait_until(lambda f: len(f.posted) > before)
    return "\n".join(_text(p.blocks) for p in app.fake.posted[before:])


async def likes(app: App) -> int:
    async with app.db.uow() as uow:
        return len(await uow.like_sets.followed())


async def test_a_bib_shared_in_a_dm_follows_papers_like_its_own(app: App) -> None:
    await app.ingest(*PAPERS)
    answer = await share(app, app.fake.share_file("reading.bib", BIB))
    assert "Now following Papers like “Agents" in answer and "(2 papers;" in answer
    assert app.fake.downloads == ["F0SHARED0000"]
    async with app.db.uow() as uow:
        followed = await uow.like_sets.followed()
    assert [s.arxiv_ids for s in followed] == [("2610.00001", "2610.00002")]
    listed = await app.command("list", channel=DM)
    assert "Papers like" in listed and "match score above" in listed
    async with app.db.uow() as uow:
        chat = await uow.chats.get(followed_chat())
        kinds = [s.kind for s in await uow.subscriptions.for_chat(chat.id)] if chat else []
    assert kinds == [SubscriptionKind.LIKE]


@pytest.mark.parametrize(
    ("content", "size", "says"),
    [
        (b"\x00\x01\x02 binary", None, "That file is not text"),
        (b"@book{x, title={none}}", None, "I found no arXiv id in that file"),
        (BIB, 3_000_000, "That file is too large (3,000,000 bytes)"),
    ],
)
async def test_bad_files_are_one_line(
    app: App, content: bytes, size: int | None, says: str
) -> None:
    await app.ingest(*PAPERS)
    answer = await share(app, app.fake.share_file("x.bib", content, size=size))
    assert says in answer and "Nothing was changed." in answer
    assert await likes(app) == 0
    assert app.fake.downloads == ([] if size else ["F0SHARED0000"])


async def test_in_a_channel_only_a_follow_message_and_only_slack_urls(app: App) -> None:
    await app.ingest(*PAPERS)
    chatter = shared(app.fake.share_file("notes.bib", BIB), channel=CHANNEL, text="our notes")
    assert (await app.post(event_body(chatter))).status_code == 200
    answer = await share(
        app, app.fake.share_file("r.bib", BIB), channel=CHANNEL, text="follow like"
    )
    assert "Now following Papers like" in answer
    assert app.fake.downloads == ["F0SHARED0001"]  # the chatter's file was never fetched
    assert not may_fetch("https://evil.example/x.bib", app.fake.api_url)
    assert may_fetch("https://files.slack.com/files-pri/T1-F1/x.bib", app.fake.api_url)
