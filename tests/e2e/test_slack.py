"""Slack end to end: the real slack_bolt app in HTTP mode, the real slack_sdk client, and a
fake Slack Web API on 127.0.0.1. Slack's side sends signed requests to the app."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

import httpx
import pytest

from bot.adapters.slack.adapter import SlackAdapter
from bot.config import Settings, StartupError
from bot.domain import Author, Chat, Paper, Platform, Reply
from bot.ports import RateLimited
from bot.services.deliver import Deliverer
from bot.services.ingest import store
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.support.slack_server import (
    FakeSlack,
    app_home_opened_event,
    block_action_body,
    event_body,
    serve_fake_slack,
    signed_request_headers,
    slash_command_body,
    view_submission_body,
)

SECRET = "test-signing-secret"
# Posts a second to one channel in tests that are not about Slack's limit (1 a second, kept
# by test_alerts_to_one_channel_keep_to_slacks_limit): a reply and an alert need not wait.
FAST_RATE = 10_000.0
TEAM, CHANNEL, ALICE, BOB = "T0PAPERW1", "C0PAPERS1", "U0ALICE01", "U0BOB0001"
HOSTILE = "Agents <@U0ALICE01> & <!here> *bold* $\\mathcal{O}(n^2)$ $<$ عربي 🚀 zero\u200bwidth"


@dataclass
class App:
    fake: FakeSlack
    adapter: SlackAdapter
    deliverer: Deliverer
    db: Database
    catalog: Catalog
    url: str
    http: httpx.AsyncClient

    async def post(self, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
        return await self.http.post(
            self.url, content=body, headers=headers or signed_request_headers(body, SECRET)
        )

    async def command(self, text: str, *, user: str = ALICE, channel: str = CHANNEL) -> str:
        before = len(self.fake.posted)
        response = await self.post(slash_command_body(text=text, user_id=user, channel_id=channel))
        assert response.status_code == 200
        await self.fake.async_wait_until(lambda f: len(f.posted) > before)
        return "\n".join(_text(p.blocks) for p in self.fake.posted[before:])

    async def ingest(self, *papers: Paper) -> None:
        async with self.db.uow() as uow:
            await store(uow, papers, self.catalog, datetime.now(UTC))
            await uow.commit()


def _text(blocks: list | None) -> str:
    parts = []
    for block in blocks or []:
        text = block.get("text")
        if isinstance(text, dict):
            parts.append(text["text"])
    return "\n".join(parts)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
async def app(
    request: pytest.FixtureRequest, db: Database, catalog: Catalog, unused_tcp_port: int
) -> AsyncIterator[App]:
    """The app posting FAST_RATE times a second to a channel; `indirect` parametrization with
    None gives it Slack's own limit (the setting's default)."""
    rate = getattr(request, "param", FAST_RATE)
    with serve_fake_slack() as fake:
        settings = Settings(
            SLACK_BOT_TOKEN=fake.bot_token,
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=fake.api_url,
            SLACK_HTTP_HOST="127.0.0.1",
            SLACK_HTTP_PORT=unused_tcp_port,
            **({} if rate is None else {"SLACK_CHANNEL_MESSAGES_PER_SECOND": rate}),
        )
        adapter = SlackAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        deliverer = Deliverer(db.uow, {"slack": adapter.messenger}, catalog)
        await adapter.start()
        try:
            async with httpx.AsyncClient() as http:
                yield App(
                    fake,
                    adapter,
                    deliverer,
                    db,
                    catalog,
                    f"http://127.0.0.1:{unused_tcp_port}/slack/events",
                    http,
                )
        finally:
            await adapter.stop()


def listing_days(last: date, weeks: int) -> list[date]:
    """arXiv's listing days (Monday to Friday) of the `weeks` weeks ending at `last`."""
    days = (last - timedelta(days=n) for n in range(7 * weeks))
    return sorted(day for day in days if day.weekday() < 5)


def paper(n: int, title: str, *tags: str) -> Paper:
    return Paper(
        arxiv_id=f"2612.{n:05d}",
        title=title,
        abstract="We propose a method. It improves results by 12% on three benchmarks.",
        authors=(Author("Ada Lovelace", ("Analytical Engines Ltd",)),),
        categories=("cs.LG",),
        announced=date(2026, 11, 2),
        tags=tags,
    )


async def test_follow_alert_mute_by_button_and_next_alert(app: App) -> None:
    fake = app.fake
    text = await app.command("follow RL for LLM Agents")
    assert "Now following RL for LLM Agents" in text
    assert fake.posted[-1].method == "chat.postMessage"  # it changed the channel: in the channel
    await app.command("digest instant")
    listed = await app.command("list")
    assert fake.posted[-1].method == "chat.postEphemeral" and fake.posted[-1].user == ALICE
    assert "RL for LLM Agents" in listed

    await app.ingest(paper(1, HOSTILE, "RL for LLM Agents", "Web Agents"))
    assert await app.deliverer.drain() == 1
    alert = fake.messages_for(CHANNEL)[-1]
    assert fake.rejected == []  # valid blocks, every piece of text escaped
    body = _text(alert.blocks)
    assert "&lt;@U0ALICE01&gt; &amp; &lt;!here&gt;" in body  # no mention, no @here
    assert "`arXiv:2612.00001` · Ada Lovelace" in body  # the id /why takes
    latest = await app.command("latest RL for LLM Agents")
    assert "`arXiv:2612.00001` · Ada Lovelace" in latest
    why = await app.command("why arXiv:2612.00001")
    assert why.index("`arXiv:2612.00001`") < why.index("Why it has its topics:")
    assert alert.text  # a plain-text fallback for notifications
    buttons = [e for b in alert.blocks if b["type"] == "actions" for e in b["elements"]]
    mute = next(b for b in buttons if b["text"]["text"] == "Mute Web Agents")

    response = await app.post(block_action_body(mute["action_id"], mute["value"], ALICE, CHANNEL))
    assert response.status_code == 200
    await fake.async_wait_until(lambda f: "Muted Web Agents" in _text(f.posted[-1].blocks))

    await app.ingest(
        paper(2, "Muted web agent paper", "RL for LLM Agents", "Web Agents"),
        paper(3, "Kept paper", "RL for LLM Agents"),
    )
    assert await app.deliverer.drain() == 1
    assert "Kept paper" in _text(fake.messages_for(CHANNEL)[-1].blocks)


async def test_bad_and_replayed_signatures_are_rejected_and_change_nothing(app: App) -> None:
    body = slash_command_body(text="follow Web Agents")
    forged = signed_request_headers(body, "not-the-secret")
    assert (await app.post(body, forged)).status_code == 401
    stale = signed_request_headers(body, SECRET, timestamp=int(time.time()) - 600)
    assert (await app.post(body, stale)).status_code == 401
    assert app.fake.posted == []
    async with app.db.uow() as uow:
        assert await uow.subscriptions.query_targets() == []
        assert await uow.chats.by_ids([1]) == {}


async def test_forged_and_foreign_buttons_change_nothing(app: App) -> None:
    await app.command("follow Web Agents")
    from bot import buttons
    from bot.domain import Action, Button

    foreign = buttons.encode(
        Button("x", Action.UNFOLLOW, "web-agents"), f"{TEAM}:C0OTHER01", app.adapter.key
    )

    def refusals(f: FakeSlack) -> int:
        return sum("not valid here" in _text(p.blocks) for p in f.posted)

    for n, value in enumerate(("u|web-agents|forgedsig00", foreign, "garbage"), start=1):
        await app.post(block_action_body("pw_unfollow_0_0", value, ALICE, CHANNEL))
        await app.fake.async_wait_until(lambda f, n=n: refusals(f) == n)
    assert "Web Agents" in await app.command("list")


async def test_channel_changes_can_be_limited_to_admins(
    db: Database, catalog: Catalog, unused_tcp_port: int
) -> None:
    with serve_fake_slack() as fake:
        fake.set_admins([ALICE])
        settings = Settings(
            SLACK_BOT_TOKEN=fake.bot_token,
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=fake.api_url,
            SLACK_HTTP_HOST="127.0.0.1",
            SLACK_HTTP_PORT=unused_tcp_port,
            SLACK_ADMINS_ONLY=True,
            SLACK_CHANNEL_MESSAGES_PER_SECOND=FAST_RATE,
        )
        adapter = SlackAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        await adapter.start()
        try:
            async with httpx.AsyncClient() as http:
                client = App(
                    fake,
                    adapter,
                    None,
                    db,
                    catalog,
                    f"http://127.0.0.1:{unused_tcp_port}/slack/events",
                    http,
                )  # type: ignore[arg-type]
                assert "Nothing was changed" in await client.command("follow Web Agents", user=BOB)
                assert "Now following Web Agents" in await client.command(
                    "follow Web Agents", user=ALICE
                )
                # Switching the channel's momentum alerts is a change too; looking is not,
                # and costs no users.info call.
                refused = await client.command("momentum alerts off", user=BOB)
                assert "Only the chat's administrators" in refused
                looked_up = fake.calls.count("users.info")
                assert "A daily digest at 08:00" in await client.command("digest", user=BOB)
                assert "Momentum alerts are on" in await client.command("momentum alerts", user=BOB)
                assert fake.calls.count("users.info") == looked_up
                # In a DM, people manage their own subscriptions.
                assert "Now following Agentic RAG" in await client.command(
                    "follow Agentic RAG", user=BOB, channel="D0BOBDM01"
                )
        finally:
            await adapter.stop()


@pytest.mark.parametrize("secret", ["", "   "])
async def test_http_mode_with_an_empty_signing_secret_refuses_to_start(
    db: Database, catalog: Catalog, unused_tcp_port: int, secret: str
) -> None:
    with serve_fake_slack() as fake:
        settings = Settings(
            SLACK_BOT_TOKEN=fake.bot_token,
            SLACK_SIGNING_SECRET=secret,
            SLACK_API_URL=fake.api_url,
            SLACK_HTTP_HOST="127.0.0.1",
            SLACK_HTTP_PORT=unused_tcp_port,
        )
        adapter = SlackAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        try:
            with pytest.raises(StartupError, match="SLACK_SIGNING_SECRET"):
                await adapter.start()
            async with httpx.AsyncClient() as http:
                with pytest.raises(httpx.ConnectError):  # nothing serves unverified requests
                    await http.post(
                        f"http://127.0.0.1:{unused_tcp_port}/slack/events",
                        content=slash_command_body(text="follow Web Agents", user_id=ALICE),
                    )
        finally:
            await adapter.stop()


async def test_app_home_shows_what_the_person_follows(app: App) -> None:
    await app.command("follow Web Agents", channel="D0ALICEDM")
    body = event_body(app_home_opened_event(ALICE), event_id="Ev0HOME01")
    assert (await app.post(body)).status_code == 200
    await app.fake.async_wait_until(lambda f: f.home_view(ALICE) is not None)
    home = json.dumps(app.fake.home_view(ALICE))
    assert "Web Agents" in home and "daily digest" in home


async def test_event_retries_are_processed_once(app: App) -> None:
    body = event_body(app_home_opened_event(ALICE), event_id="Ev0RETRY1")
    headers = signed_request_headers(body, SECRET)
    await app.post(body, headers)
    await app.fake.async_wait_until(lambda f: len(f.views) == 1)
    retry = {
        **signed_request_headers(body, SECRET),
        "X-Slack-Retry-Num": "1",
        "X-Slack-Retry-Reason": "http_timeout",
    }
    assert (await app.post(body, retry)).status_code == 200
    await asyncio.sleep(0.3)
    assert len(app.fake.views) == 1


@pytest.mark.parametrize(
    "error",
    ["channel_not_found", "not_in_channel", "is_archived", "account_inactive", "invalid_auth"],
)
async def test_gone_destinations_are_deactivated(app: App, error: str) -> None:
    await app.command("follow Web Agents")
    await app.command("digest instant")
    app.fake.fail_next("chat.postMessage", error, channel=CHANNEL)
    await app.ingest(paper(10, "Into the void", "Web Agents"))
    await app.deliverer.drain()
    async with app.db.uow() as uow:
        chats = await uow.chats.by_ids([1])
    assert chats[1].active is False


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # the limit is the adapter's
@pytest.mark.parametrize("app", [None], indirect=True)
async def test_alerts_to_one_channel_keep_to_slacks_limit(app: App) -> None:
    app.fake.rate_limit(per_channel_per_second=1.0)  # Slack's: 1 post a second to a channel
    await app.command("follow Web Agents")
    await app.command("digest instant")
    for i in range(3):
        await app.ingest(paper(30 + i, f"Flood {i}", "Web Agents"))
        await app.deliverer.drain()
    posts = [_text(p.blocks) for p in app.fake.messages_for(CHANNEL)]
    assert [t for t in ("Flood 0", "Flood 1", "Flood 2") if any(t in p for p in posts)] == [
        "Flood 0",
        "Flood 1",
        "Flood 2",
    ]
    assert app.fake.too_many_requests == 0


async def test_a_429_storm_delivers_every_message_once(app: App) -> None:
    await app.command("follow Web Agents")
    await app.command("digest instant")
    app.fake.fail_next("chat.postMessage", "ratelimited", retry_after=1, times=3)
    await app.ingest(*(paper(20 + i, f"Storm {i}", "Web Agents") for i in range(3)))
    for _ in range(10):
        await app.deliverer.drain()
        titles = [p for p in app.fake.messages_for(CHANNEL) if "Storm" in _text(p.blocks)]
        if len(titles) == 3:
            break
        await asyncio.sleep(0.5)
    titles = sorted(
        t
        for p in app.fake.messages_for(CHANNEL)
        for t in ("Storm 0", "Storm 1", "Storm 2")
        if t in _text(p.blocks)
    )
    assert titles == ["Storm 0", "Storm 1", "Storm 2"]


async def test_a_429_goes_back_to_the_outbox_rather_than_around_the_limiter(app: App) -> None:
    chat = Chat(id=1, platform=Platform.SLACK, external_id=f"{TEAM}:{CHANNEL}")
    (message,) = app.adapter.messenger.render(chat, Reply.text("hello"))
    app.fake.fail_next("chat.postMessage", "ratelimited", retry_after=7)
    with pytest.raises(RateLimited) as refused:
        await app.adapter.messenger.deliver(chat, message)
    assert refused.value.retry_after == 7
    assert app.fake.calls.count("chat.postMessage") == 1  # not resent behind the limiter's back


@pytest.mark.parametrize(
    "text",
    ["", "follow", "frobnicate", "follow " + "x" * 5000, "follow <script>", "why <@U1>", "mute"],
)
async def test_bad_input_gets_a_valid_answer(app: App, text: str) -> None:
    answer = await app.command(text)
    assert answer
    assert app.fake.rejected == []


async def test_momentum_chart_goes_to_a_dm(app: App) -> None:
    # Nine weeks of listings: momentum and its chart need the index to cover eight.
    await app.ingest(
        *(
            replace(paper(400 + i, f"Momentum {i}", "Web Agents"), announced=day)
            for i, day in enumerate(listing_days(date(2026, 11, 2), weeks=9))
        )
    )
    text = await app.command("momentum Web Agents", channel="D0ALICEDM")
    assert "Web Agents" in text and "in the last four weeks" in text
    await app.fake.async_wait_until(lambda f: len(f.uploads) == 1)
    assert app.fake.rejected == []


async def test_ask_button_opens_a_form_and_its_question_is_answered(app: App) -> None:
    fake = app.fake
    shaped = replace(
        paper(41, "Shaped Rewards for Web Agents", "RL for LLM Agents"),
        abstract="Web agents trained with reinforcement learning get sparse rewards. We give "
        "web agents a shaped reward for every page that brings them closer to the goal.",
    )
    await app.ingest(shaped, paper(42, "Other agents", "RL for LLM Agents"))
    await app.command("topic RL for LLM Agents")
    topic = fake.posted[-1]
    found = [e for b in topic.blocks if b["type"] == "actions" for e in b["elements"]]
    ask = next(e for e in found if e["text"]["text"] == "Ask about RL for LLM Agents")
    assert ask["value"].startswith("a") and ask["value"].endswith("rl-for-llm-agents")

    await app.post(block_action_body(ask["action_id"], ask["value"], ALICE, CHANNEL))
    await fake.async_wait_until(lambda f: len(f.modals) == 1)
    view = fake.modals[0]["view"]
    assert fake.rejected == []  # a valid modal
    (field,) = view["blocks"]
    assert field["type"] == "input" and field["element"]["multiline"] is True
    assert field["label"]["text"] == "Ask about RL for LLM Agents:"

    def values(text: str) -> dict:
        return {"question": {"text": {"type": "plain_text_input", "value": text}}}

    empty = await app.post(view_submission_body(view, values("   "), ALICE))
    assert empty.json()["response_action"] == "errors"  # the form stays open, says why

    before = len(fake.posted)
    response = await app.post(
        view_submission_body(view, values("which rewards\ndo web agents use?"), ALICE)
    )
    assert response.status_code == 200
    await fake.async_wait_until(lambda f: len(f.posted) > before)
    answer = fake.posted[-1]
    assert answer.method == "chat.postEphemeral" and answer.user == ALICE
    text = _text(answer.blocks)
    assert text.startswith("From 1 of the 2 papers on RL for LLM Agents:")
    assert "shaped reward" in text and "arXiv:2612.00041" in text

    # The form's payload is checked again: another channel's (or a forged) one asks nothing.
    moved = view | {"private_metadata": view["private_metadata"].replace(CHANNEL, "C0OTHER01")}
    before = len(fake.posted)
    await app.post(view_submission_body(moved, values("shaped reward?"), ALICE))
    await fake.async_wait_until(lambda f: len(f.posted) > before)
    assert "not valid here" in _text(fake.posted[-1].blocks)


async def test_an_expired_trigger_gets_the_line_to_type_instead(app: App) -> None:
    fake = app.fake
    await app.command("topic Web Agents")
    found = [e for b in fake.posted[-1].blocks if b["type"] == "actions" for e in b["elements"]]
    ask = next(e for e in found if e["text"]["text"] == "Ask about Web Agents")
    fake.fail_next("views.open", "expired_trigger_id")
    before = len(fake.posted)
    await app.post(block_action_body(ask["action_id"], ask["value"], ALICE, CHANNEL))
    await fake.async_wait_until(lambda f: len(f.posted) > before)
    said = _text(fake.posted[-1].blocks)
    assert "could not open the form" in said and "/paperwatch ask Web Agents:" in said
    assert fake.modals == [] and fake.posted[-1].method == "chat.postEphemeral"
