"""Text typed in a DM with the app on Slack (the real slack_bolt app in HTTP mode, a signed
`message` event): commands are the slash command's, so a line that begins with a command's
name is shown back as one, anything else gets the general hint; the app's own posts, edits
and channel chatter get nothing."""

from __future__ import annotations

import asyncio
import time

from tests.e2e.test_slack import ALICE, CHANNEL, App, _text, app, catalog
from tests.support.slack_server import event_body

__all__ = ["app", "catalog"]  # the fixtures of test_slack, used here too

DM = "D0ALICEDM"


def typed(text: str, *, channel: str = DM, **extra: str) -> dict:
    return {
        "type": "message",
        "channel": channel,
        "channel_type": "im" if channel.startswith("D") else "channel",
        "user": ALICE,
        "text": text,
        "ts": f"{time.time():.6f}",
        **extra,
    }


async def say(app: App, event: dict) -> str:
    before = len(app.fake.posted)
    response = await app.post(event_body(event))
    assert response.status_code == 200
    await app.fake.async_wait_until(lambda f: len(f.posted) > before)
    return "\n".join(_text(p.blocks) for p in app.fake.posted[before:])


async def test_a_command_typed_in_a_dm_is_shown_as_the_slash_command(app: App) -> None:
    answer = await say(app, typed("follow <b>Web</b> & Agents"))
    shown = "Commands start with a slash: /paperwatch follow &lt;b&gt;Web&lt;/b&gt; &amp; Agents"
    assert shown in answer  # escaped as mrkdwn wants: the text cannot become markup
    assert "I answer commands" in await say(app, typed("hello there"))
    assert "don't follow any topic" in await app.command("list", channel=DM)  # nothing ran


async def test_the_apps_own_posts_edits_and_channel_chatter_get_no_answer(app: App) -> None:
    before = len(app.fake.posted)
    for event in (
        typed("follow Web Agents", bot_id="B0PAPERWATCH"),
        typed("follow Web Agents", subtype="message_changed"),
        typed("follow Web Agents", channel=CHANNEL),
        typed("   "),
    ):
        assert (await app.post(event_body(event))).status_code == 200
    await asyncio.sleep(0.3)  # an answer, had one been sent, would be posted by now
    assert len(app.fake.posted) == before
    assert "Commands start with a slash" in await say(app, typed("latest"))  # still answering
