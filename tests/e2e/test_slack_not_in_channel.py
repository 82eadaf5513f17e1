"""`/paperwatch` in a channel the app has not been added to, end to end (HTTP mode, the
real slack_bolt app and slack_sdk client against the fake Slack): the answer could not be
posted there, so the person saw nothing at all. It now reaches them through the command's
response_url, with what to do."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from bot.adapters.slack.adapter import SlackAdapter
from bot.config import Settings
from bot.topics.catalog import load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.support.slack_server import (
    FakeSlack,
    serve_fake_slack,
    signed_request_headers,
    slash_command_body,
)

SECRET = "test-signing-secret"
OUTSIDE = "C0NOTJOIN"


@pytest.fixture
async def slack(db: Database, unused_tcp_port: int) -> AsyncIterator[tuple[FakeSlack, str]]:
    with serve_fake_slack() as fake:
        fake.add_channel(OUTSIDE, "outside", is_member=False)
        settings = Settings(
            SLACK_BOT_TOKEN=fake.bot_token,
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=fake.api_url,
            SLACK_HTTP_HOST="127.0.0.1",
            SLACK_HTTP_PORT=unused_tcp_port,
        )
        adapter = SlackAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=load_catalog()))
        await adapter.start()
        try:
            yield fake, f"http://127.0.0.1:{unused_tcp_port}/slack/events"
        finally:
            await adapter.stop()


@pytest.mark.parametrize("text", ["follow Web Agents", "help"])
async def test_a_command_in_a_channel_without_the_app_is_answered_to_the_person(
    slack: tuple[FakeSlack, str], text: str
) -> None:
    fake, url = slack
    body = slash_command_body(text=text, channel_id=OUTSIDE, response_url=fake.response_url())
    async with httpx.AsyncClient() as http:
        response = await http.post(url, content=body, headers=signed_request_headers(body, SECRET))
    assert response.status_code == 200
    await fake.async_wait_until(lambda f: len(f.responses) > 0)
    [answer] = fake.responses
    assert answer.payload["response_type"] == "ephemeral"
    shown = " ".join(b["text"]["text"] for b in answer.payload["blocks"] if "text" in b)
    assert "not a member of this channel" in shown and "/invite" in shown
    assert fake.posted == []  # nothing reached the channel itself
