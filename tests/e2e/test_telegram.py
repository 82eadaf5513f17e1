"""Telegram end to end: the real PTB Application against a fake Bot API on 127.0.0.1.

The adapter, the outbox worker and a real database run on the test's event loop;
the fake server plays Telegram (and its users) over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

import httpx
import pytest

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.config import Settings, StartupError
from bot.domain import Author, ChatRef, DigestMode, Paper, Platform, Reply
from bot.ports import RateLimited
from bot.services.deliver import Deliverer
from bot.services.ingest import store
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.rate_limit import CommandRateLimit
from handlers.registry import REGISTRY
from storage.database import Database
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

TOKEN = "123456:TEST-token"
ALICE = 111  # a private chat (chat id = user id)
GROUP = -100500

HOSTILE_TITLE = (
    "Agents <script> & $\\mathcal{O}(n^2)$ $<$ bounds: عربي עברית 🚀 zero\u200bwidth "
    + "very long title " * 320  # about 5,000 characters
)


@dataclass
class Bot:
    fake: FakeTelegram
    adapter: TelegramAdapter
    deliverer: Deliverer
    db: Database
    catalog: Catalog

    async def say(self, chat_id: int, text: str, **kwargs: object) -> str:
        before = len(self.fake.messages_for(chat_id))
        self.fake.push_message(chat_id, text, **kwargs)  # type: ignore[arg-type]
        await self.fake.async_wait_until(lambda f: len(f.messages_for(chat_id)) > before)
        return "\n".join(m.visible_text for m in self.fake.messages_for(chat_id)[before:])

    async def ingest(self, *papers: Paper) -> None:
        async with self.db.uow() as uow:
            await store(uow, papers, self.catalog, datetime.now(UTC))
            await uow.commit()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


#: Flood limits far above Telegram's, for tests that are not about them: the fake enforces
#: no limit unless a test asks it to, and at Telegram's 1 message a second per chat (20 a
#: minute per group) a conversation of a few commands spends most of its time waiting.
FAST_LIMITS = {
    "TELEGRAM_MESSAGES_PER_SECOND": 10_000,
    "TELEGRAM_CHAT_MESSAGES_PER_SECOND": 10_000,
    "TELEGRAM_GROUP_MESSAGES_PER_MINUTE": 10_000,
}

#: The Settings defaults: Telegram's own limits. A test about them says
#: `@pytest.mark.parametrize("limits", [TELEGRAM_LIMITS])`, which overrides the fixture.
TELEGRAM_LIMITS: dict[str, float] = {}


@pytest.fixture
def limits() -> dict[str, float]:
    """The flood limits the `bot` fixture's limiter keeps."""
    return FAST_LIMITS


@pytest.fixture
async def bot(db: Database, catalog: Catalog, limits: dict[str, float]) -> AsyncIterator[Bot]:
    with serve_fake_telegram() as fake:
        settings = Settings(TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_BASE_URL=fake.base_url, **limits)
        ctx = Context(uow=db.uow, catalog=catalog)
        adapter = TelegramAdapter(settings, REGISTRY, ctx)
        deliverer = Deliverer(db.uow, {"telegram": adapter.messenger}, catalog)
        await adapter.start()
        try:
            yield Bot(fake, adapter, deliverer, db, catalog)
        finally:
            await adapter.stop()


def listing_days(last: date, weeks: int) -> list[date]:
    """arXiv's listing days (Monday to Friday) of the `weeks` weeks ending at `last`."""
    days = (last - timedelta(days=n) for n in range(7 * weeks))
    return sorted(day for day in days if day.weekday() < 5)


def paper(n: int, title: str, *tags: str) -> Paper:
    return Paper(
        arxiv_id=f"2610.{n:05d}",
        title=title,
        abstract="We propose a method. It improves results by 12% on three benchmarks.",
        authors=(Author("Ada Lovelace", ("Analytical Engines Ltd",)), Author("Alan Turing")),
        categories=("cs.LG", "cs.AI"),
        announced=date(2026, 10, 1),
        tags=tags,
    )


async def test_a_whole_conversation_with_buttons_and_mutes(bot: Bot) -> None:
    fake = bot.fake
    assert {c["command"] for c in fake.commands} == {spec.name for spec in REGISTRY.specs}

    assert "/follow RL for LLM Agents" in await bot.say(ALICE, "/start")
    assert "Now following RL for LLM Agents" in await bot.say(ALICE, "/follow RL for LLM Agents")
    assert "sent as soon as" in await bot.say(ALICE, "/digest instant")

    await bot.ingest(paper(1, HOSTILE_TITLE, "RL for LLM Agents", "Web Agents"))
    assert await bot.deliverer.drain() == 1
    alert = fake.messages_for(ALICE)[-1]
    assert fake.rejected == []  # Telegram accepted the hostile text as valid HTML
    assert alert.link_preview_options == {"is_disabled": True}
    assert "Agents <script> & $\\mathcal{O}(n^2)$ $<$ bounds: عربي עברית 🚀" in alert.visible_text
    assert "TL;DR:" in alert.visible_text
    keyboard = [b for row in alert.reply_markup["inline_keyboard"] for b in row]
    texts = [b["text"] for b in keyboard]
    assert "Mute Web Agents" in texts and "Why this paper?" in texts
    assert "Unfollow RL for LLM Agents" in texts and "Latest in RL for LLM Agents" in texts
    assert all(len(b["callback_data"].encode()) <= 64 for b in keyboard)

    mute = next(b for b in keyboard if b["text"] == "Mute Web Agents")
    before = len(fake.messages_for(ALICE))
    fake.press_button(ALICE, alert.message_id, mute["callback_data"])
    await fake.async_wait_until(lambda f: len(f.messages_for(ALICE)) > before)
    assert "Muted Web Agents" in fake.messages_for(ALICE)[-1].visible_text
    assert fake.answered_callbacks and "Muted Web Agents" in fake.answered_callbacks[-1]["text"]

    # The next alert respects the mute: a Web Agents paper is not sent, another one is.
    await bot.ingest(
        paper(2, "Muted: a web agent trained with RL", "RL for LLM Agents", "Web Agents"),
        paper(3, "Kept: credit assignment for LLM agents", "RL for LLM Agents"),
    )
    assert await bot.deliverer.drain() == 1
    assert "Kept: credit assignment" in fake.messages_for(ALICE)[-1].visible_text
    assert fake.rejected == []


async def test_why_and_latest_buttons(bot: Bot) -> None:
    await bot.say(ALICE, "/follow RL for LLM Agents")
    await bot.say(ALICE, "/digest instant")
    await bot.ingest(paper(4, "A paper", "RL for LLM Agents"))
    await bot.deliverer.drain()
    alert = bot.fake.messages_for(ALICE)[-1]
    keyboard = {
        b["text"]: b["callback_data"] for row in alert.reply_markup["inline_keyboard"] for b in row
    }
    for label, expected in (
        # The card first, with the id /why takes, then the reasons.
        ("Why this paper?", "A paper\narXiv:2610.00004 · "),
        ("Why this paper?", "🏷 RL for LLM Agents\n\nWhy it has its topics:\n\n• RL for LLM"),
        ("Latest in RL for LLM Agents", "Latest in RL for LLM Agents"),
    ):
        before = len(bot.fake.messages_for(ALICE))
        bot.fake.press_button(ALICE, alert.message_id, keyboard[label])
        await bot.fake.async_wait_until(lambda f, n=before: len(f.messages_for(ALICE)) > n)
        assert expected in bot.fake.messages_for(ALICE)[-1].visible_text


async def test_forged_and_foreign_buttons_change_nothing(bot: Bot) -> None:
    await bot.say(ALICE, "/follow RL for LLM Agents")
    fake = bot.fake
    # A forged signature, garbage, and a genuine button signed for another chat.
    from bot import buttons
    from bot.domain import Action, Button

    key = buttons.button_key(TOKEN)
    foreign = buttons.encode(Button("x", Action.UNFOLLOW, "rl-for-llm-agents"), "999", key)
    for data in ("u|rl-for-llm-agents|forgedsig00", "garbage", foreign):
        fake.push_callback(ALICE, data)
    await fake.async_wait_until(lambda f: len(f.answered_callbacks) >= 3)
    assert all("not valid here" in c["text"] for c in fake.answered_callbacks)
    assert "RL for LLM Agents" in await bot.say(ALICE, "/list")  # still followed


async def test_a_button_older_than_thirty_days_changes_nothing(bot: Bot) -> None:
    from datetime import timedelta

    from bot import buttons
    from bot.domain import Action, Button

    await bot.say(ALICE, "/follow RL for LLM Agents")
    unfollow = Button("x", Action.UNFOLLOW, "rl-for-llm-agents")
    issued = buttons.today() - timedelta(days=31)
    old = buttons.encode(unfollow, str(ALICE), buttons.button_key(TOKEN), on=issued)
    assert old is not None
    bot.fake.push_callback(ALICE, old)
    await bot.fake.async_wait_until(lambda f: len(f.answered_callbacks) == 1)
    assert "not valid here" in bot.fake.answered_callbacks[0]["text"]
    assert "RL for LLM Agents" in await bot.say(ALICE, "/list")  # still followed


async def test_in_groups_only_admins_change_things(bot: Bot) -> None:
    bot.fake.set_admins(GROUP, [7])
    refused = await bot.say(GROUP, "/follow Web Agents", chat_type="supergroup", user_id=5)
    assert "Only the chat's administrators" in refused
    assert "don't follow any topic" in await bot.say(
        GROUP, "/list", chat_type="supergroup", user_id=5
    )
    ok = await bot.say(GROUP, "/follow Web Agents", chat_type="supergroup", user_id=7)
    assert "Now following Web Agents" in ok
    assert "Web Agents" in await bot.say(GROUP, "/list", chat_type="supergroup", user_id=5)


async def test_blocked_chats_are_deactivated_and_come_back(bot: Bot) -> None:
    await bot.say(ALICE, "/follow RL for LLM Agents")
    await bot.say(ALICE, "/digest instant")
    bot.fake.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user", chat_id=ALICE)
    await bot.ingest(paper(5, "Sent to a blocked chat", "RL for LLM Agents"))
    await bot.deliverer.drain()
    async with bot.db.uow() as uow:
        chat = await uow.chats.get_by_id(1)
    assert chat is not None and chat.active is False
    await bot.say(ALICE, "/start")  # unblocked: everything is back
    await bot.deliverer.drain()
    assert "Sent to a blocked chat" in bot.fake.messages_for(ALICE)[-1].visible_text


# The fake enforces Telegram's limits here; the bot must keep them too, or its own pace
# would draw 429s beyond the four injected ones.
@pytest.mark.parametrize("limits", [TELEGRAM_LIMITS], ids=["telegram-limits"])
async def test_a_429_storm_delivers_every_message_exactly_once(bot: Bot) -> None:
    chats = [201, 202, 203]
    for chat_id in chats:
        await bot.say(chat_id, "/follow RL for LLM Agents")
        await bot.say(chat_id, "/digest instant")
    bot.fake.rate_limit(per_chat_per_second=1.0, global_per_second=30.0)
    bot.fake.fail_next("sendMessage", 429, retry_after=1, times=4)
    await bot.ingest(*(paper(10 + i, f"Storm paper {i}", "RL for LLM Agents") for i in range(3)))

    def titles(chat_id: int) -> list[str]:
        return sorted(
            re.search(r"Storm paper \d", m.visible_text).group()  # type: ignore[union-attr]
            for m in bot.fake.messages_for(chat_id)
            if "Storm paper" in m.visible_text
        )

    # A 429 sends the row back to the outbox until `retry_after` has passed; the
    # worker's next rounds (every 10 s in the bot) deliver it then.
    for _ in range(20):
        await bot.deliverer.drain()
        if all(len(titles(chat_id)) == 3 for chat_id in chats):
            break
        await asyncio.sleep(0.5)
    for chat_id in chats:
        assert titles(chat_id) == [f"Storm paper {i}" for i in range(3)]
    assert bot.fake.too_many_requests == 4


async def test_a_group_upgraded_to_a_supergroup_keeps_its_subscriptions(bot: Bot) -> None:
    bot.fake.set_admins(GROUP, [7])
    await bot.say(GROUP, "/follow RL for LLM Agents", chat_type="group", user_id=7)
    await bot.say(GROUP, "/digest instant", chat_type="group", user_id=7)
    bot.fake.fail_next("sendMessage", 400, migrate_to_chat_id=-1009999, chat_id=GROUP)
    await bot.ingest(paper(20, "After the upgrade", "RL for LLM Agents"))
    await bot.deliverer.drain()
    assert "After the upgrade" in bot.fake.messages_for(-1009999)[-1].visible_text


async def test_odd_updates_are_ignored_politely(bot: Bot) -> None:
    fake = bot.fake
    fake.push_update(
        {
            "message": {
                "message_id": 50,
                "date": 0,
                "chat": {"id": ALICE, "type": "private"},
                "from": {"id": ALICE, "is_bot": False, "first_name": "A"},
                "sticker": {
                    "file_id": "x",
                    "file_unique_id": "y",
                    "width": 1,
                    "height": 1,
                    "is_animated": False,
                    "is_video": False,
                    "type": "regular",
                },
            }
        }
    )
    fake.push_update(
        {
            "edited_message": {
                "message_id": 51,
                "date": 0,
                "edit_date": 1,
                "chat": {"id": ALICE, "type": "private"},
                "from": {"id": ALICE, "is_bot": False, "first_name": "A"},
                "text": "/follow Web Agents",
            }
        }
    )
    fake.push_message(GROUP, "/follow Web Agents", chat_type="group", user_id=999, is_bot=True)
    fake.push_message(GROUP, "hello everyone", chat_type="group", user_id=5)
    # The bot is still alive and answers the next real command.
    assert "don't follow any topic" in await bot.say(ALICE, "/list")
    assert fake.messages_for(GROUP) == []


@pytest.mark.parametrize(
    "text",
    [
        "/follow",
        "/follow " + "x" * 5000,
        "/frobnicate",
        "/why <b>",
        "/mute",
        "hello",
        "/follow <script>",
        "/search",
        '/search NEAR( "',
        "/search " + "x" * 5000,
    ],
)
async def test_bad_input_gets_an_answer_that_renders(bot: Bot, text: str) -> None:
    answer = await bot.say(ALICE, text)
    assert answer
    assert bot.fake.rejected == []


async def test_a_command_typed_without_its_slash_is_shown_with_it(bot: Bot) -> None:
    answer = await bot.say(ALICE, "follow <b>Web</b> & Agents")
    assert "Commands start with a slash: /follow <b>Web</b> & Agents" in answer
    assert bot.fake.rejected == []  # the echoed text was escaped, so the HTML renders
    assert "don't follow any topic" in await bot.say(ALICE, "/list")  # nothing was followed


async def test_webhook_mode_checks_the_secret(
    db: Database, catalog: Catalog, unused_tcp_port: int
) -> None:
    with serve_fake_telegram() as fake:
        settings = Settings(
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=fake.base_url,
            TELEGRAM_WEBHOOK_URL="https://bot.example.org/telegram",
            TELEGRAM_WEBHOOK_SECRET="s3cret-value",
            TELEGRAM_WEBHOOK_LISTEN="127.0.0.1",
            TELEGRAM_WEBHOOK_PORT=unused_tcp_port,
        )
        adapter = TelegramAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        await adapter.start()
        try:
            assert "setWebhook" in fake.calls
            update = {
                "update_id": 1,
                "message": {
                    "message_id": 1,
                    "date": 0,
                    "chat": {"id": ALICE, "type": "private"},
                    "from": {"id": ALICE, "is_bot": False, "first_name": "A"},
                    "text": "/start",
                    "entities": [{"type": "bot_command", "offset": 0, "length": 6}],
                },
            }
            url = f"http://127.0.0.1:{unused_tcp_port}/telegram"
            async with httpx.AsyncClient() as http:
                bad = await http.post(
                    url,
                    content=json.dumps(update),
                    headers={
                        "Content-Type": "application/json",
                        "X-Telegram-Bot-Api-Secret-Token": "wrong",
                    },
                )
                assert bad.status_code == 403
                forged = await http.post(  # no secret header at all
                    url,
                    content=_forged_follow(4242),
                    headers={"Content-Type": "application/json"},
                )
                assert forged.status_code == 403
                good = await http.post(
                    url,
                    content=json.dumps(update),
                    headers={
                        "Content-Type": "application/json",
                        "X-Telegram-Bot-Api-Secret-Token": "s3cret-value",
                    },
                )
                assert good.status_code == 200
            await fake.async_wait_until(lambda f: len(f.messages_for(ALICE)) == 1)
            assert "/follow RL for LLM Agents" in fake.messages_for(ALICE)[0].visible_text
        finally:
            await adapter.stop()
    async with db.uow() as uow:
        assert await uow.chats.get(ChatRef(Platform.TELEGRAM, "4242")) is None


async def test_momentum_comes_with_a_chart(bot: Bot) -> None:
    # Nine weeks of listings: momentum and its chart need the index to cover eight.
    await bot.ingest(
        *(
            replace(paper(300 + i, f"Momentum paper {i}", "RL for LLM Agents"), announced=day)
            for i, day in enumerate(listing_days(date(2026, 10, 1), weeks=9))
        )
    )
    text = await bot.say(ALICE, "/momentum RL for LLM Agents")
    assert "RL for LLM Agents" in text and "in the last four weeks" in text
    await bot.fake.async_wait_until(lambda f: any(m.method == "sendPhoto" for m in f.sent))
    photo = next(m for m in bot.fake.sent if m.method == "sendPhoto")
    assert photo.chat_id == ALICE and bot.fake.rejected == []


async def test_a_channel_where_the_bot_is_admin(bot: Bot) -> None:
    channel = -1007777
    answer = await bot.say(channel, "/follow Web Agents", chat_type="channel")
    assert "Now following Web Agents" in answer
    await bot.say(channel, "/digest instant", chat_type="channel")
    await bot.ingest(paper(50, "For the channel", "Web Agents"))
    await bot.deliverer.drain()
    assert "For the channel" in bot.fake.messages_for(channel)[-1].visible_text


async def _subscriptions(bot: Bot, chat_id: int) -> list[str]:
    async with bot.db.uow() as uow:
        chat = await uow.chats.get(ChatRef(Platform.TELEGRAM, str(chat_id)))
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
    return [s.label for s in subs]


async def test_channel_subscribers_change_nothing_and_post_nothing(bot: Bot) -> None:
    fake, channel, admin, subscriber = bot.fake, -1007777, 7, 5
    fake.set_admins(channel, [admin])
    await bot.say(channel, "/follow Web Agents", chat_type="channel")  # the channel's own post
    await bot.say(channel, "/digest instant", chat_type="channel")
    await bot.ingest(paper(51, "For the channel", "Web Agents", "RL for LLM Agents"))
    await bot.deliverer.drain()
    alert = fake.messages_for(channel)[-1]
    keyboard = {
        b["text"]: b["callback_data"] for row in alert.reply_markup["inline_keyboard"] for b in row
    }
    posts = len(fake.messages_for(channel))
    presses = (
        "Unfollow Web Agents",
        "Mute RL for LLM Agents",
        "Why this paper?",
        "Latest in Web Agents",
    )
    for n, label in enumerate(presses, start=1):
        fake.press_button(channel, alert.message_id, keyboard[label], user_id=subscriber)
        await fake.async_wait_until(lambda f, n=n: len(f.answered_callbacks) == n)
    answers = fake.answered_callbacks
    assert all(a.get("show_alert") for a in answers)
    assert "Only the chat's administrators" in answers[0]["text"]
    assert "Only the chat's administrators" in answers[1]["text"]
    assert answers[2]["text"].startswith("• For the channel\nWhy it has its topics:\n• RL for")
    assert "For the channel" in answers[3]["text"]
    assert len(fake.messages_for(channel)) == posts  # nothing was posted into the channel
    assert await _subscriptions(bot, channel) == ["Web Agents"]
    async with bot.db.uow() as uow:
        chat = await uow.chats.get(ChatRef(Platform.TELEGRAM, str(channel)))
        assert chat is not None and await uow.mutes.for_chat(chat.id) == []
    # The channel's administrator may.
    fake.press_button(channel, alert.message_id, keyboard["Unfollow Web Agents"], user_id=admin)
    await fake.async_wait_until(lambda f: len(f.messages_for(channel)) > posts)
    assert "Stopped following Web Agents" in fake.messages_for(channel)[-1].visible_text
    assert await _subscriptions(bot, channel) == []


async def test_group_members_may_look_but_not_switch_momentum_alerts(bot: Bot) -> None:
    fake = bot.fake
    fake.set_admins(GROUP, [7])

    async def say(text: str, user: int) -> str:
        return await bot.say(GROUP, text, chat_type="supergroup", user_id=user)

    assert "Only the chat's administrators" in await say("/momentum alerts off", 5)
    asked = fake.calls.count("getChatMember")
    # Read-only commands are open to everyone, and cost no getChatMember call.
    assert "A daily digest at 08:00" in await say("/digest", 5)
    assert "Momentum alerts are on" in await say("/momentum alerts", 5)
    assert "don't follow any topic" in await say("/list", 5)
    assert fake.calls.count("getChatMember") == asked
    assert "Momentum alerts are off" in await say("/momentum alerts off", 7)
    assert "Only the chat's administrators" in await say("/digest instant", 5)
    async with bot.db.uow() as uow:
        chat = await uow.chats.get(ChatRef(Platform.TELEGRAM, str(GROUP)))
    assert chat is not None and chat.momentum_alerts is False
    assert chat.digest_mode is DigestMode.DAILY


async def test_group_members_without_arguments_get_the_usage_line(bot: Bot) -> None:
    """A command typed without its argument changes nothing, so a member is shown how to use
    it rather than told they may not; with the argument it is refused."""
    bot.fake.set_admins(GROUP, [7])

    async def say(text: str) -> str:
        return await bot.say(GROUP, text, chat_type="supergroup", user_id=5)

    for command in ("/follow", "/unfollow", "/mute", "/unmute", "/timezone", "/quiet"):
        answer = await say(command)
        assert "Only the chat's administrators" not in answer, command
        assert "Usage:" in answer, (command, answer)
    assert "getChatMember" not in bot.fake.calls  # nothing to change: nobody to ask about
    assert "Only the chat's administrators" in await say("/follow Web Agents")
    assert "getChatMember" in bot.fake.calls


async def test_group_members_may_change_things_when_the_operator_allows(
    db: Database, catalog: Catalog
) -> None:
    with serve_fake_telegram() as fake:
        settings = Settings(
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=fake.base_url,
            TELEGRAM_GROUP_ADMINS_ONLY=False,
        )
        adapter = TelegramAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        await adapter.start()
        try:
            bot = Bot(fake, adapter, Deliverer(db.uow, {}, catalog), db, catalog)
            answer = await bot.say(GROUP, "/follow Web Agents", chat_type="supergroup", user_id=5)
            assert "Now following Web Agents" in answer
            assert "getChatMember" not in fake.calls
        finally:
            await adapter.stop()


async def test_a_flood_of_commands_is_told_to_wait_once(db: Database, catalog: Catalog) -> None:
    with serve_fake_telegram() as fake:
        settings = Settings(
            TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_BASE_URL=fake.base_url, **FAST_LIMITS
        )
        limit = CommandRateLimit(per_user=0.001, per_chat=0.001, burst=2)  # no draining
        ctx = Context(uow=db.uow, catalog=catalog, rate_limit=limit)
        adapter = TelegramAdapter(settings, REGISTRY, ctx)
        await adapter.start()
        try:
            bot = Bot(fake, adapter, Deliverer(db.uow, {}, catalog), db, catalog)
            assert "Now following Web Agents" in await bot.say(ALICE, "/follow Web Agents")
            assert "Web Agents" in await bot.say(ALICE, "/list")
            assert "faster than I can answer" in await bot.say(ALICE, "/follow Agentic RAG")
            for text in ("/follow Agentic RAG", "/list", "/start"):
                fake.push_message(ALICE, text)
            # Updates are handled in order: once Bob has his answer, Alice's were handled.
            assert "Now following" in await bot.say(222, "/follow Web Agents")
            assert len(fake.messages_for(ALICE)) == 3
        finally:
            await adapter.stop()
    assert await _subscriptions(bot, ALICE) == ["Web Agents"]


async def test_commands_for_another_bot_are_ignored(bot: Bot) -> None:
    fake = bot.fake
    fake.set_admins(GROUP, [7])
    fake.push_message(GROUP, "/follow@otherbot Web Agents", chat_type="supergroup", user_id=7)
    answer = await bot.say(GROUP, "/list@paperwatch_test_bot", chat_type="supergroup", user_id=7)
    assert "don't follow any topic" in answer
    assert len(fake.messages_for(GROUP)) == 1  # the /list answer, nothing for the other bot
    assert "Now following Web Agents" in await bot.say(
        GROUP, "/follow@PaperWatch_Test_Bot Web Agents", chat_type="supergroup", user_id=7
    )


def _forged_follow(chat_id: int) -> bytes:
    """An update nobody at Telegram sent: a /follow for an invented chat."""
    update = {
        "update_id": 99,
        "message": {
            "message_id": 1,
            "date": 0,
            "chat": {"id": chat_id, "type": "private"},
            "from": {"id": chat_id, "is_bot": False, "first_name": "Mallory"},
            "text": "/follow Web Agents",
            "entities": [{"type": "bot_command", "offset": 0, "length": 7}],
        },
    }
    return json.dumps(update).encode()


@pytest.mark.parametrize("secret", [None, "", "   "])
async def test_webhook_mode_without_a_secret_refuses_to_start(
    db: Database, catalog: Catalog, unused_tcp_port: int, secret: str | None
) -> None:
    with serve_fake_telegram() as fake:
        extra = {} if secret is None else {"TELEGRAM_WEBHOOK_SECRET": secret}
        settings = Settings(
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=fake.base_url,
            TELEGRAM_WEBHOOK_URL="https://bot.example.org/telegram",
            TELEGRAM_WEBHOOK_LISTEN="127.0.0.1",
            TELEGRAM_WEBHOOK_PORT=unused_tcp_port,
            **extra,
        )
        adapter = TelegramAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        try:
            with pytest.raises(StartupError, match="TELEGRAM_WEBHOOK_SECRET"):
                await adapter.start()
            # Nothing listens, so the forged update of the issue gets nowhere.
            async with httpx.AsyncClient() as http:
                with pytest.raises(httpx.ConnectError):
                    await http.post(
                        f"http://127.0.0.1:{unused_tcp_port}/telegram",
                        content=_forged_follow(4242),
                        headers={"Content-Type": "application/json"},
                    )
            assert "setWebhook" not in fake.calls
        finally:
            await adapter.stop()
    async with db.uow() as uow:
        assert await uow.chats.get(ChatRef(Platform.TELEGRAM, "4242")) is None


async def test_an_outbox_send_meets_a_429_once_and_hands_it_back(bot: Bot) -> None:
    """The outbox worker's sends are not retried inside the limiter: the 429 comes back as
    RateLimited at once, so the row waits `retry_after` in the outbox, not in a claim."""
    await bot.say(ALICE, "/start")
    async with bot.db.uow() as uow:
        chat = await uow.chats.get(ChatRef(Platform.TELEGRAM, str(ALICE)))
    assert chat is not None
    [message] = bot.adapter.messenger.render(chat, Reply.text("Hello"))
    bot.fake.fail_next("sendMessage", 429, retry_after=7)
    with pytest.raises(RateLimited) as raised:
        await bot.adapter.messenger.deliver(chat, message)
    assert raised.value.retry_after == 7
    assert bot.fake.too_many_requests == 1  # asked once, not retried
    assert "Hello" not in [m.visible_text for m in bot.fake.messages_for(ALICE)]


async def test_search_finds_stored_papers_and_renders_them(bot: Bot) -> None:
    """/search through the real PTB client: hostile titles render, the topic prefix limits
    the search, and FTS operators are words."""
    await bot.ingest(
        paper(11, HOSTILE_TITLE, "Web Agents"),
        paper(12, "Credit assignment for LLM agents", "RL for LLM Agents"),
        paper(13, "Protein folding without agents"),
    )
    found = await bot.say(ALICE, "/search agents")
    assert 'Best matches for "agents":' in found
    assert "Agents <script> & $\\mathcal{O}(n^2)$" in found and "Credit assignment" in found
    within = await bot.say(ALICE, "/search RL for LLM Agents: agents")
    assert "in RL for LLM Agents:" in within and "Credit assignment" in within
    assert "Protein folding" not in within and "<script>" not in within
    assert "No paper matches" in await bot.say(ALICE, "/search NEAR(agents zeppelin)")
    assert bot.fake.rejected == []


def answering(n: int, title: str, abstract: str) -> Paper:
    return replace(paper(n, title, "RL for LLM Agents"), abstract=abstract)


async def test_ask_button_prompts_and_the_reply_is_answered_with_citations(bot: Bot) -> None:
    fake = bot.fake
    await bot.ingest(
        answering(
            31,
            "Shaped Rewards for Web Agents",
            "Web agents trained with reinforcement learning get sparse rewards. We give web "
            "agents a shaped reward for every page that brings them closer to the goal.",
        ),
        answering(32, "Unrelated Agents", "We study memory for planning agents in games."),
    )
    shown = await bot.say(ALICE, "/topic RL for LLM Agents")
    assert "RL for LLM Agents" in shown
    topic = fake.messages_for(ALICE)[-1]
    keyboard = {
        b["text"]: b["callback_data"] for row in topic.reply_markup["inline_keyboard"] for b in row
    }
    ask = keyboard["Ask about RL for LLM Agents"]
    assert ask.startswith("a") and ask.endswith("rl-for-llm-agents")  # signed, topic slug

    before = len(fake.messages_for(ALICE))
    fake.press_button(ALICE, topic.message_id, ask)
    await fake.async_wait_until(lambda f: len(f.messages_for(ALICE)) > before)
    prompt = fake.messages_for(ALICE)[-1]
    assert prompt.visible_text == "Ask about RL for LLM Agents:"
    assert prompt.reply_markup is not None and prompt.reply_markup["force_reply"] is True
    assert prompt.reply_markup["input_field_placeholder"]
    assert fake.rejected == []

    answer = await bot.say(ALICE, "which rewards do web agents use?", reply_to=prompt.message_id)
    assert answer.startswith("From 1 of the 2 papers on RL for LLM Agents:")
    assert "shaped reward" in answer and "[arXiv:2610.00031]" in answer
    assert "https://arxiv.org/abs/2610.00031" in answer
    assert "2610.00032" not in answer
    # After a restart the prompt is forgotten: its reply is told to press the button again.
    bot.adapter.prompts._open.clear()
    again = await bot.say(ALICE, "which rewards do web agents use?", reply_to=prompt.message_id)
    assert again == "That question prompt has expired: press the Ask button again."


async def test_a_reply_to_anything_but_a_prompt_asks_nothing(bot: Bot) -> None:
    fake = bot.fake
    await bot.ingest(
        answering(33, "Shaped Rewards", "We give web agents a shaped reward for every page.")
    )
    await bot.say(ALICE, "/topic RL for LLM Agents")
    topic = fake.messages_for(ALICE)[-1]  # the bot's, but no prompt
    answer = await bot.say(ALICE, "shaped reward web agents?", reply_to=topic.message_id)
    assert "arXiv:" not in answer and "From 1" not in answer
    # A person's own message made to look like a prompt is no prompt either.
    before = len(fake.messages_for(ALICE))
    forged = fake.push_message(ALICE, "Ask about RL for LLM Agents:")["message"]["message_id"]
    await fake.async_wait_until(lambda f: len(f.messages_for(ALICE)) > before)
    answer = await bot.say(ALICE, "shaped reward web agents?", reply_to=forged)
    assert "arXiv:" not in answer and "From 1" not in answer
    # A forged button payload asks for nothing.
    before = len(fake.answered_callbacks)
    fake.push_callback(ALICE, "a000" + "x" * 11 + "rl-for-llm-agents", message_id=topic.message_id)
    await fake.async_wait_until(lambda f: len(f.answered_callbacks) > before)
    assert "not valid" in fake.answered_callbacks[-1].get("text", "")
    assert not any("Ask about" in m.visible_text for m in fake.messages_for(ALICE))


async def test_in_a_group_the_prompt_names_who_pressed_and_their_reply_is_answered(
    bot: Bot,
) -> None:
    fake = bot.fake
    await bot.ingest(
        answering(34, "Shaped Rewards", "We give web agents a shaped reward for every page.")
    )
    await bot.say(GROUP, "/topic RL for LLM Agents", chat_type="supergroup", user_id=5)
    topic = fake.messages_for(GROUP)[-1]
    rows = topic.reply_markup["inline_keyboard"]
    ask = next(b for row in rows for b in row if b["text"].startswith("Ask about"))
    before = len(fake.messages_for(GROUP))
    fake.press_button(GROUP, topic.message_id, ask["callback_data"], user_id=5)
    await fake.async_wait_until(lambda f: len(f.messages_for(GROUP)) > before)
    prompt = fake.messages_for(GROUP)[-1]
    assert prompt.visible_text.endswith(", ask about RL for LLM Agents:")
    assert 'href="tg://user?id=5"' in prompt.text  # the presser, mentioned
    assert prompt.reply_markup["selective"] is True and fake.rejected == []
    answer = await bot.say(
        GROUP,
        "shaped reward for web agents?",
        chat_type="supergroup",
        user_id=5,
        reply_to=prompt.message_id,
    )
    assert "[arXiv:2610.00034]" in answer


async def test_in_a_channel_the_ask_button_says_where_to_ask(bot: Bot) -> None:
    fake, channel = bot.fake, -1007777
    await bot.say(channel, "/topic RL for LLM Agents", chat_type="channel")
    topic = fake.messages_for(channel)[-1]
    rows = topic.reply_markup["inline_keyboard"]
    ask = next(b for row in rows for b in row if b["text"].startswith("Ask about"))
    posts, answered = len(fake.messages_for(channel)), len(fake.answered_callbacks)
    fake.press_button(channel, topic.message_id, ask["callback_data"], user_id=5)
    await fake.async_wait_until(lambda f: len(f.answered_callbacks) > answered)
    popup = fake.answered_callbacks[-1]
    assert popup["text"] == "Ask me in a private chat: /ask RL for LLM Agents: <your question>"
    assert popup.get("show_alert") is True
    assert len(fake.messages_for(channel)) == posts  # no prompt posted to every subscriber
