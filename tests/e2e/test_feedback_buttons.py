"""👍/👎 buttons end to end: the real PTB client against the fake Bot API, and the real
slack_bolt app and slack_sdk client against the fake Slack Web API. A press stores the vote
and answers the presser; a press on a paper the chat was never sent changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta

import httpx
import pytest

from bot import buttons
from bot.adapters.slack.adapter import SlackAdapter
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.config import Settings
from bot.domain import Action, Button, ChatRef, Paper, Platform
from bot.services.deliver import Deliverer
from bot.services.digests import fold_due_digests
from bot.services.ingest import store
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.support.slack_server import block_action_body, serve_fake_slack, slash_command_body
from tests.support.slack_server import signed_request_headers as signed
from tests.support.telegram_server import serve_fake_telegram

TOKEN = "123456:TEST-token"
ALICE, BOB = 111, 222
FAST = {
    "TELEGRAM_MESSAGES_PER_SECOND": 10_000,
    "TELEGRAM_CHAT_MESSAGES_PER_SECOND": 10_000,
    "TELEGRAM_GROUP_MESSAGES_PER_MINUTE": 10_000,
    "SLACK_CHANNEL_MESSAGES_PER_SECOND": 10_000,
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def paper(n: int, title: str) -> Paper:
    return Paper(
        f"2611.{n:05d}",
        title,
        abstract="Reinforcement learning for LLM agents: we train web agents with rewards.",
        categories=("cs.LG",),
        announced=date(2026, 11, 2),
        tags=("RL for LLM Agents",),
    )


async def ingest(db: Database, catalog: Catalog, *papers: Paper) -> None:
    async with db.uow() as uow:
        await store(uow, papers, catalog, datetime.now(UTC))
        await uow.commit()


async def votes(db: Database, ref: ChatRef) -> dict[str, int]:
    async with db.uow() as uow:
        chat = await uow.chats.get(ref)
        found = await uow.feedback.votes(chat.id) if chat else []
    return {v.paper.arxiv_id: v.value for v in found}


def keyboard(message: object) -> dict[str, str]:
    rows = message.reply_markup["inline_keyboard"]  # type: ignore[attr-defined]
    return {b["text"]: b["callback_data"] for row in rows for b in row}


async def test_telegram_votes_on_alerts_and_digests(db: Database, catalog: Catalog) -> None:
    with serve_fake_telegram() as fake:
        settings = Settings(TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_BASE_URL=fake.base_url, **FAST)
        adapter = TelegramAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        deliverer = Deliverer(db.uow, {"telegram": adapter.messenger}, catalog)
        await adapter.start()
        try:

            async def say(chat: int, text: str) -> None:
                before = len(fake.messages_for(chat))
                fake.push_message(chat, text)
                await fake.async_wait_until(lambda f: len(f.messages_for(chat)) > before)

            await say(ALICE, "/follow RL for LLM Agents")
            await say(ALICE, "/digest instant")
            await say(BOB, "/follow RL for LLM Agents")  # daily digests
            await ingest(db, catalog, paper(1, "Agents that <b>learn</b> & vote"))
            assert await deliverer.drain() == 1
            alert = fake.messages_for(ALICE)[-1]
            keys = keyboard(alert)
            assert all(len(data.encode()) <= 64 for data in keys.values())
            messages = len(fake.messages_for(ALICE))
            fake.press_button(ALICE, alert.message_id, keys["👍 More like this"])
            await fake.async_wait_until(lambda f: len(f.answered_callbacks) == 1)
            answer = fake.answered_callbacks[-1]
            assert answer["text"].startswith("👍 noted for “Agents that <b>learn</b> & vote”")
            assert not answer.get("show_alert")
            assert len(fake.messages_for(ALICE)) == messages  # a toast, nothing posted
            alice = ChatRef(Platform.TELEGRAM, str(ALICE))
            assert await votes(db, alice) == {"2611.00001": 1}
            fake.press_button(ALICE, alert.message_id, keys["👎 Less like this"])
            await fake.async_wait_until(lambda f: len(f.answered_callbacks) == 2)
            assert await votes(db, alice) == {"2611.00001": -1}

            # A correctly signed 👍 on a stored paper this chat was never sent: refused.
            await ingest(db, catalog, paper(2, "Sent to nobody yet"))
            async with db.uow() as uow:  # the alert for Alice stays unsent
                chat = await uow.chats.get(alice)
                assert chat is not None
                await uow.chats.update(chat.id, paused=True)
                await uow.commit()
            data = buttons.encode(Button("", Action.MORE, "2611.00002"), str(ALICE), adapter.key)
            assert data is not None
            fake.push_callback(ALICE, data, message_id=alert.message_id)
            await fake.async_wait_until(lambda f: len(f.answered_callbacks) == 3)
            refused = fake.answered_callbacks[-1]
            assert (
                refused["show_alert"]
                and "2611.00002 was not in an alert or a digest I sent this chat" in refused["text"]
            )
            # Another chat's button: its signature is not this chat's.
            foreign = buttons.encode(Button("", Action.MORE, "2611.00001"), str(BOB), adapter.key)
            fake.push_callback(ALICE, foreign or "", message_id=alert.message_id)
            await fake.async_wait_until(lambda f: len(f.answered_callbacks) == 4)
            assert "not valid here" in fake.answered_callbacks[-1]["text"]
            assert await votes(db, alice) == {"2611.00001": -1}

            # Bob's digest: a 👍/👎 row for each paper, titled.
            now = datetime.now(UTC)
            async with db.uow() as uow:
                bob = await uow.chats.get(ChatRef(Platform.TELEGRAM, str(BOB)))
                assert bob is not None
                await uow.chats.update(bob.id, next_digest_at=now - timedelta(minutes=1))
                await uow.commit()
            assert await fold_due_digests(db.uow, now) == 1
            await deliverer.drain()
            digest = fake.messages_for(BOB)[-1]
            keys = keyboard(digest)
            assert "👍 Agents that <b>learn</b> &…" in keys and "👍 Sent to nobody yet" in keys
            row = next(
                row
                for row in digest.reply_markup["inline_keyboard"]
                if row[0]["text"] == "👍 Sent to nobody yet"
            )
            fake.press_button(BOB, digest.message_id, row[1]["callback_data"])  # its 👎
            await fake.async_wait_until(lambda f: len(f.answered_callbacks) == 5)
            assert fake.answered_callbacks[-1]["text"].startswith("👎 noted for “Sent to nobody")
            assert await votes(db, ChatRef(Platform.TELEGRAM, str(BOB))) == {"2611.00002": -1}
        finally:
            await adapter.stop()


SECRET = "test-signing-secret"
TEAM, CHANNEL, USER = "T0PAPERW1", "C0PAPERS1", "U0ALICE01"


@pytest.fixture
async def slack(db: Database, catalog: Catalog, unused_tcp_port: int) -> AsyncIterator[tuple]:
    with serve_fake_slack() as fake:
        settings = Settings(
            SLACK_BOT_TOKEN=fake.bot_token,
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=fake.api_url,
            SLACK_HTTP_HOST="127.0.0.1",
            SLACK_HTTP_PORT=unused_tcp_port,
            **FAST,
        )
        adapter = SlackAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        await adapter.start()
        try:
            async with httpx.AsyncClient() as http:
                yield fake, adapter, http, f"http://127.0.0.1:{unused_tcp_port}/slack/events"
        finally:
            await adapter.stop()


def _text(blocks: list | None) -> str:
    return "\n".join(b["text"]["text"] for b in blocks or [] if isinstance(b.get("text"), dict))


async def test_slack_vote_button(db: Database, catalog: Catalog, slack: tuple) -> None:
    fake, adapter, http, url = slack

    async def post(body: bytes) -> None:
        before = len(fake.posted)
        assert (await http.post(url, content=body, headers=signed(body, SECRET))).status_code == 200
        await fake.async_wait_until(lambda f: len(f.posted) > before)

    await post(
        slash_command_body(text="follow RL for LLM Agents", user_id=USER, channel_id=CHANNEL)
    )
    await post(slash_command_body(text="digest instant", user_id=USER, channel_id=CHANNEL))
    await ingest(db, catalog, paper(3, "Slack <@U0ALICE01> agents"))
    assert await Deliverer(db.uow, {"slack": adapter.messenger}, catalog).drain() == 1
    alert = fake.messages_for(CHANNEL)[-1]
    elements = [e for b in alert.blocks if b["type"] == "actions" for e in b["elements"]]
    more = next(e for e in elements if e["text"]["text"] == "👍 More like this")
    await post(block_action_body(more["action_id"], more["value"], USER, CHANNEL))
    answer = fake.posted[-1]
    assert answer.method == "chat.postEphemeral" and answer.user == USER
    assert "👍 noted for “Slack &lt;@U0ALICE01&gt; agents”" in _text(answer.blocks)
    ref = ChatRef(Platform.SLACK, f"{TEAM}:{CHANNEL}")
    assert await votes(db, ref) == {"2611.00003": 1}
    # A signed 👍 for a paper this channel was never sent changes nothing.
    await ingest(db, catalog, paper(4, "Not sent"))
    forged = buttons.encode(Button("", Action.MORE, "2611.00004"), ref.external_id, adapter.key)
    await post(block_action_body("pw_more_0_0", forged, USER, CHANNEL))
    assert "2611.00004 was not in an alert or a digest I sent this chat" in _text(
        fake.posted[-1].blocks
    )
    assert await votes(db, ref) == {"2611.00003": 1}
