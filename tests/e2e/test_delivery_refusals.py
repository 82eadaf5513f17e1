"""What a platform's refusal means to the outbox: the real PTB and slack_sdk clients
against the fakes. A refusal of the message itself is `Permanent` (dead at once, never
retried); a recipient that is gone stays `RecipientGone`; the rest may pass."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.limits import KeyedLimiter
from bot.adapters.slack.messenger import SlackMessenger
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.adapters.telegram.messenger import TelegramMessenger
from bot.config import Settings
from bot.domain import Chat, ChatKind, Platform, Reply
from bot.ports import DeliveryError, Permanent, RecipientGone, Transient
from bot.topics.catalog import load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.support.slack_server import FakeSlack, serve_fake_slack
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

TOKEN = "123456:TEST-token"
ALICE = Chat(id=1, platform=Platform.TELEGRAM, external_id="111")
CHANNEL = Chat(id=2, platform=Platform.SLACK, external_id="T0TEAM:C0PAPERS", kind=ChatKind.GROUP)


@pytest.fixture
async def telegram(db: Database) -> AsyncIterator[tuple[FakeTelegram, TelegramMessenger]]:
    with serve_fake_telegram() as fake:
        settings = Settings(
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=fake.base_url,
            # Not about flood limits: the retry need not wait Telegram's second per chat.
            TELEGRAM_CHAT_MESSAGES_PER_SECOND=1000,
        )
        adapter = TelegramAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=load_catalog()))
        await adapter.start(receive_updates=False)
        try:
            yield fake, adapter.messenger
        finally:
            await adapter.stop()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("description", "meaning"),
    [
        ("Bad Request: can't parse entities: unsupported start tag at byte offset 3", Permanent),
        ("Bad Request: message is too long", Permanent),
        ("Bad Request: BUTTON_DATA_INVALID", Permanent),
        ("Bad Request: chat not found", RecipientGone),
    ],
)
async def test_telegram_400s(
    telegram: tuple[FakeTelegram, TelegramMessenger],
    description: str,
    meaning: type[DeliveryError],
) -> None:
    fake, messenger = telegram
    (message,) = messenger.render(ALICE, Reply.text("hello"))
    fake.fail_next("sendMessage", 400, description)
    with pytest.raises(meaning):
        await messenger.deliver(ALICE, message)
    await messenger.deliver(ALICE, message)  # the fault was for one call only
    assert [m.visible_text for m in fake.messages_for(111)] == ["hello"]


@pytest.fixture
async def slack() -> AsyncIterator[tuple[FakeSlack, SlackMessenger]]:
    with serve_fake_slack() as fake:
        client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)
        yield fake, SlackMessenger(client, b"key", KeyedLimiter(1000.0))


@pytest.mark.parametrize(
    ("error", "meaning"),
    [
        ("invalid_blocks", Permanent),
        ("msg_too_long", Permanent),
        ("no_text", Permanent),
        ("channel_not_found", RecipientGone),
        ("internal_error", Transient),
    ],
)
async def test_slack_refusals(
    slack: tuple[FakeSlack, SlackMessenger], error: str, meaning: type[DeliveryError]
) -> None:
    fake, messenger = slack
    (message,) = messenger.render(CHANNEL, Reply.text("hello"))
    fake.fail_next("chat.postMessage", error)
    with pytest.raises(meaning):
        await messenger.deliver(CHANNEL, message)
