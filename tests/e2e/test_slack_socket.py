"""Slack end to end in Socket Mode (the README's default): the real SlackAdapter with
SLACK_APP_TOKEN set, slack_bolt's aiohttp AsyncSocketModeHandler and slack_sdk's clients,
against a fake Slack on 127.0.0.1 (Web API over HTTP, Socket Mode over a WebSocket).

Slack's side of the socket runs on its own thread; the app runs on the test's event loop,
so the tests wait with the fakes' `async_` waits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from bot.adapters.slack.adapter import SlackAdapter
from bot.config import Settings
from bot.domain import ChatRef, Platform
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.e2e.test_slack import FAST_RATE
from tests.support.slack_server import Ack, FakeSlack, FakeSocketMode, serve_fake_slack
from tests.support.slack_socket import ACK_DEADLINE

TEAM, CHANNEL, ALICE = "T0PAPERW1", "C0PAPERS1", "U0ALICE01"


@dataclass
class SocketApp:
    fake: FakeSlack
    socket: FakeSocketMode
    adapter: SlackAdapter
    db: Database

    async def command(self, text: str, *, channel: str = CHANNEL) -> tuple[Ack, str]:
        """Send `/paperwatch text` over the socket; its ack and the text of the answer."""
        before = len(self.fake.posted)
        envelope_id = self.socket.send_slash_command(
            text, user_id=ALICE, channel_id=channel, team_id=TEAM
        )
        ack = await self.socket.async_wait_for_ack(envelope_id)  # within Slack's 3 seconds
        await self.fake.async_wait_until(lambda f: len(f.posted) > before)
        return ack, "\n".join(_text(p.blocks) for p in self.fake.posted[before:])

    async def press(self, button: dict, *, channel: str = CHANNEL) -> Ack:
        """Press a button the app sent, over the socket; its ack once the answer is posted."""
        before = len(self.fake.posted)
        envelope_id = self.socket.send_block_action(
            button["action_id"], button["value"], user_id=ALICE, channel_id=channel, team_id=TEAM
        )
        ack = await self.socket.async_wait_for_ack(envelope_id)
        await self.fake.async_wait_until(lambda f: len(f.posted) > before)
        return ack

    async def followed(self, channel: str = CHANNEL) -> list[str]:
        """What the channel follows, as stored."""
        async with self.db.uow() as uow:
            chat = await uow.chats.get(ChatRef(Platform.SLACK, f"{TEAM}:{channel}"))
            return [s.label for s in await uow.subscriptions.for_chat(chat.id)] if chat else []


def _text(blocks: list | None) -> str:
    return "\n".join(
        block["text"]["text"] for block in blocks or [] if isinstance(block.get("text"), dict)
    )


def _buttons(blocks: list | None) -> list[dict]:
    return [e for b in blocks or [] if b["type"] == "actions" for e in b["elements"]]


def socket_mode(fake: FakeSlack) -> Settings:
    """Socket Mode: an app token, and no signing secret (nothing comes in over HTTP)."""
    return Settings(
        SLACK_BOT_TOKEN=fake.bot_token,
        SLACK_APP_TOKEN=fake.app_token,
        SLACK_API_URL=fake.api_url,
        SLACK_CHANNEL_MESSAGES_PER_SECOND=FAST_RATE,
    )


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
async def app(db: Database, catalog: Catalog) -> AsyncIterator[SocketApp]:
    with serve_fake_slack() as fake:
        adapter = SlackAdapter(socket_mode(fake), REGISTRY, Context(uow=db.uow, catalog=catalog))
        await adapter.start()
        try:
            await fake.socket.async_wait_until(lambda s: s.ready)  # connected, hello sent
            yield SocketApp(fake, fake.socket, adapter, db)
        finally:
            await adapter.stop()


async def test_a_slash_command_is_acked_at_once_and_answered_in_the_channel(
    app: SocketApp,
) -> None:
    [connection] = app.socket.connections  # start() connected with the app token
    # Both tokens checked first (one URL fetched and left unused), then the connection.
    opened = ["auth.test", "apps.connections.open", "apps.connections.open"]
    assert connection.greeted and app.fake.calls[:3] == opened

    ack, text = await app.command("follow Web Agents")
    assert ack.seconds < ACK_DEADLINE and ack.connection == 1
    assert "Now following Web Agents" in text
    answer = app.fake.posted[-1]  # it changed the channel: posted in the channel, for all
    assert (answer.method, answer.channel) == ("chat.postMessage", CHANNEL)
    assert await app.followed() == ["Web Agents"]
    assert app.fake.rejected == [] and app.socket.unexpected == []


async def test_after_a_refresh_request_the_app_reconnects_and_still_answers(
    app: SocketApp,
) -> None:
    await app.command("follow Web Agents")
    assert app.socket.disconnect("refresh_requested") == 1
    await app.socket.async_wait_until(
        lambda s: len(s.connections) == 2 and s.connections[1].greeted and s.connections[0].closed
    )
    old, new = app.socket.connections
    assert old.closed_by == "app" and not new.closed  # the app left the old one itself
    # A fresh URL and ticket (the first of the three was start()'s check of the token).
    assert app.fake.calls.count("apps.connections.open") == 3
    assert app.socket.refused == 0

    ack, text = await app.command("list")
    assert ack.connection == 2 and ack.seconds < ACK_DEADLINE
    assert "Web Agents" in text
    answer = app.fake.posted[-1]  # changed nothing: only Alice sees it
    assert (answer.method, answer.user) == ("chat.postEphemeral", ALICE)
    assert app.fake.rejected == [] and app.socket.unexpected == []


async def test_a_button_press_is_acked_and_handled(app: SocketApp) -> None:
    await app.command("follow Web Agents")
    _, listed = await app.command("list")
    assert "Web Agents" in listed
    [unfollow] = _buttons(app.fake.posted[-1].blocks)
    assert unfollow["text"]["text"] == "Unfollow Web Agents"

    ack = await app.press(unfollow)
    assert ack.seconds < ACK_DEADLINE
    answer = app.fake.posted[-1]
    assert (answer.method, answer.channel) == ("chat.postMessage", CHANNEL)
    assert "Stopped following Web Agents" in _text(answer.blocks)
    assert await app.followed() == []
    assert app.fake.rejected == [] and app.socket.unexpected == []


async def test_stop_closes_the_socket_cleanly(
    db: Database, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with serve_fake_slack() as fake:
        adapter = SlackAdapter(socket_mode(fake), REGISTRY, Context(uow=db.uow, catalog=catalog))
        tasks_before = asyncio.all_tasks()
        await adapter.start()
        await fake.socket.async_wait_until(lambda s: s.ready)
        app = SocketApp(fake, fake.socket, adapter, db)
        await app.command("follow Web Agents")

        await adapter.stop()
        await fake.socket.async_wait_until(lambda s: s.connections[0].closed)
        [connection] = fake.socket.connections
        assert (connection.closed_by, connection.close_code) == ("app", 1000)  # a normal close

        # The client's receiver, monitor and message processor end with it.
        left = asyncio.all_tasks() - tasks_before - {asyncio.current_task()}
        if left:
            _, pending = await asyncio.wait(left, timeout=2.0)
            assert pending == set()
        assert fake.calls.count("apps.connections.open") == 2  # check + connect, no reconnect
    assert [r.getMessage() for r in caplog.records] == []  # no warnings, no tracebacks
