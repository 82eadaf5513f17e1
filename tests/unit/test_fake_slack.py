"""The fake Slack Web API server, driven by the real slack_sdk clients over HTTP.

The async tests need aiohttp (slack_sdk's AsyncWebClient is built on it); without it they
are skipped with that reason, and the same behaviour is covered through the sync WebClient.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import builtin_handlers
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.webhook import WebhookClient

from tests.support.slack_blocks import (
    MAX_MESSAGE_TEXT,
    check_blocks,
    escape_mrkdwn,
    message_text_length,
    mrkdwn_problem,
)
from tests.support.slack_server import (
    FakeSlack,
    app_home_opened_event,
    block_action_body,
    event_body,
    serve_fake_slack,
    signed_request_headers,
    slash_command_body,
)

CHANNEL = "C0PAPERS1"
SECRET = "fake-signing-secret"
needs_aiohttp = pytest.mark.skipif(
    importlib.util.find_spec("aiohttp") is None,
    reason="aiohttp is not installed: slack_sdk's AsyncWebClient cannot run",
)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with serve_fake_slack() as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=slack.bot_token, base_url=slack.api_url, timeout=5)


def section(text: str, kind: str = "mrkdwn") -> dict:
    return {"type": "section", "text": {"type": kind, "text": text}}


def button(text: str = "Follow", value: str = "v", action_id: str = "follow") -> dict:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": text},
        "value": value,
        "action_id": action_id,
    }


def actions(*elements: dict) -> dict:
    return {"type": "actions", "elements": list(elements)}


def error_of(client: WebClient, **kwargs: Any) -> SlackApiError:
    with pytest.raises(SlackApiError) as caught:
        client.chat_postMessage(**({"channel": CHANNEL, "text": "fallback"} | kwargs))
    return caught.value


VALID_BLOCKS = [
    {"type": "header", "text": {"type": "plain_text", "text": "New on arXiv"}},
    section("*<https://arxiv.org/abs/2401.00001|Attention &amp; more>* by A. Author"),
    {"type": "section", "fields": [{"type": "mrkdwn", "text": "*Score* 0.9"}]},
    {"type": "context", "elements": [{"type": "mrkdwn", "text": "cs.LG · <!here>"}]},
    {"type": "divider"},
    actions(button(), button("Mute", "m", "mute") | {"style": "danger"}),
]


# ----- Web API basics ------------------------------------------------------------------------
def test_auth_test_answers_the_bot_identity(slack: FakeSlack, client: WebClient) -> None:
    answer = client.auth_test()
    assert answer["ok"] is True
    assert (answer["user_id"], answer["team_id"]) == (slack.bot_user_id, slack.team_id)
    assert answer["bot_id"] == slack.bot_id
    assert slack.calls == ["auth.test"]


@needs_aiohttp
async def test_async_client_auth_and_post(slack: FakeSlack) -> None:
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    assert (await client.auth_test())["user_id"] == slack.bot_user_id
    await client.chat_postMessage(channel=CHANNEL, text="hi", blocks=VALID_BLOCKS)
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel=CHANNEL, text="R&D")
    assert caught.value.response["error"] == "invalid_blocks"
    assert [p.text for p in slack.messages_for(CHANNEL)] == ["hi"]


def test_valid_block_kit_message_is_accepted_and_recorded(
    slack: FakeSlack, client: WebClient
) -> None:
    answer = client.chat_postMessage(channel=CHANNEL, text="1 new paper", blocks=VALID_BLOCKS)
    assert answer["channel"] == CHANNEL and answer["message"]["blocks"] == VALID_BLOCKS
    reply = client.chat_postMessage(channel=CHANNEL, text="thread", thread_ts=answer["ts"])
    [first, second] = slack.messages_for(CHANNEL)
    assert (first.method, first.text, first.blocks, first.ts) == (
        "chat.postMessage",
        "1 new paper",
        VALID_BLOCKS,
        answer["ts"],
    )
    assert second.thread_ts == answer["ts"] and second.ts == reply["ts"] > answer["ts"]
    assert first.time <= second.time and slack.rejected == []
    assert slack.messages_for("C0OTHER01") == []


def test_form_encoded_blocks_are_decoded(slack: FakeSlack, client: WebClient) -> None:
    client.api_call(
        "chat.postMessage", data={"channel": CHANNEL, "blocks": json.dumps(VALID_BLOCKS)}
    )
    assert slack.posted[0].blocks == VALID_BLOCKS
    with pytest.raises(SlackApiError) as caught:
        client.api_call("chat.postMessage", data={"channel": CHANNEL, "blocks": "[{"})
    assert caught.value.response["error"] == "invalid_blocks_format"


def test_query_string_parameters_like_aiohttp_sends_them(slack: FakeSlack) -> None:
    auth = {"Authorization": f"Bearer {slack.bot_token}"}
    info = httpx.get(f"{slack.api_url}conversations.info?channel={CHANNEL}", headers=auth)
    assert info.json()["channel"]["id"] == CHANNEL
    blocks = json.dumps([section("query")])
    posted = httpx.post(
        f"{slack.api_url}chat.postMessage",
        params={"channel": CHANNEL, "blocks": blocks},
        headers=auth,
    )
    assert posted.json()["ok"] is True and slack.posted[0].blocks == [section("query")]


def test_ephemeral_and_update(slack: FakeSlack, client: WebClient) -> None:
    client.chat_postEphemeral(channel=CHANNEL, user="U0ALICE01", text="only you")
    ts = client.chat_postMessage(channel=CHANNEL, text="v1", blocks=[section("one")])["ts"]
    client.chat_update(channel=CHANNEL, ts=ts, text="v2")
    assert slack.message(CHANNEL, ts)["blocks"] == [section("one")]  # kept without `blocks`
    client.chat_update(channel=CHANNEL, ts=ts, text="v3", blocks=[section("three")])
    assert slack.message(CHANNEL, ts)["text"] == "v3"
    methods = [(p.method, p.user, p.text) for p in slack.messages_for(CHANNEL)]
    assert methods == [
        ("chat.postEphemeral", "U0ALICE01", "only you"),
        ("chat.postMessage", None, "v1"),
        ("chat.update", None, "v2"),
        ("chat.update", None, "v3"),
    ]
    with pytest.raises(SlackApiError, match="message_not_found"):
        client.chat_update(channel=CHANNEL, ts="1.000001", text="x")


def test_conversations_and_users_info(slack: FakeSlack, client: WebClient) -> None:
    slack.add_channel("C0ARCHIVE", "old", is_archived=True)
    slack.set_admins(["U0ADMIN01"], owners=["U0OWNER01"])
    assert client.conversations_info(channel=CHANNEL)["channel"]["is_member"] is True
    assert client.conversations_info(channel="C0ARCHIVE")["channel"]["is_archived"] is True
    users = {
        user: client.users_info(user=user)["user"]
        for user in ("U0ADMIN01", "U0OWNER01", "U0ALICE01")
    }
    flags = {user: (info["is_admin"], info["is_owner"]) for user, info in users.items()}
    assert flags == {
        "U0ADMIN01": (True, False),
        "U0OWNER01": (True, True),
        "U0ALICE01": (False, False),
    }
    with pytest.raises(SlackApiError, match="user_not_found"):
        client.users_info(user="nobody")
    slack.require_known_channels = True
    with pytest.raises(SlackApiError, match="channel_not_found"):
        client.conversations_info(channel=CHANNEL)


def test_views_publish_records_the_home_tab(slack: FakeSlack, client: WebClient) -> None:
    view = {"type": "home", "blocks": VALID_BLOCKS}
    first = client.views_publish(user_id="U0ALICE01", view=view)["view"]
    client.views_publish(user_id="U0ALICE01", view=view, hash=first["hash"])
    assert [v.user_id for v in slack.views] == ["U0ALICE01", "U0ALICE01"]
    assert slack.home_view("U0ALICE01")["blocks"] == VALID_BLOCKS
    with pytest.raises(SlackApiError, match="hash_conflict"):
        client.views_publish(user_id="U0ALICE01", view=view, hash=first["hash"])
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        client.views_publish(user_id="U0ALICE01", view={"type": "modal", "blocks": []})


def test_files_upload_v2_goes_through_the_fake(slack: FakeSlack, client: WebClient) -> None:
    answer = client.files_upload_v2(
        content=b"a,b\n1,2\n", filename="digest.csv", channel=CHANNEL, initial_comment="digest"
    )
    assert answer["file"]["name"] == "digest.csv"
    [upload] = slack.uploads
    assert (upload.content, upload.channel, upload.completed) == (b"a,b\n1,2\n", CHANNEL, True)
    assert slack.calls == ["files.getUploadURLExternal", "files.completeUploadExternal"]


def test_auth_failures_and_unknown_methods_are_recorded(slack: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as missing:
        WebClient(base_url=slack.api_url).auth_test()
    with pytest.raises(SlackApiError) as wrong:
        WebClient(token="xoxb-wrong", base_url=slack.api_url).auth_test()
    with pytest.raises(SlackApiError) as unknown:
        WebClient(token=slack.bot_token, base_url=slack.api_url).api_call("files.upload")
    assert missing.value.response["error"] == "not_authed"
    assert wrong.value.response["error"] == "invalid_auth"
    assert (unknown.value.response.status_code, unknown.value.response["error"]) == (
        404,
        "unknown_method",
    )
    assert [(r.method, r.error) for r in slack.rejected] == [
        ("auth.test", "not_authed"),
        ("auth.test", "invalid_auth"),
        ("files.upload", "unknown_method"),
    ]
    assert slack.calls == ["auth.test", "auth.test", "files.upload"]


# ----- Block Kit validation ------------------------------------------------------------------
REJECTED: dict[str, tuple[dict, str, str]] = {
    "51 blocks": ({"blocks": [{"type": "divider"}] * 51}, "invalid_blocks", "no more than 50"),
    "section 3001": ({"blocks": [section("x" * 3001)]}, "invalid_blocks", "less than 3001"),
    "field 2001": (
        {"blocks": [{"type": "section", "fields": [{"type": "mrkdwn", "text": "x" * 2001}]}]},
        "invalid_blocks",
        "less than 2001",
    ),
    "header 151": (
        {"blocks": [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}]},
        "invalid_blocks",
        "less than 151",
    ),
    "header mrkdwn": (
        {"blocks": [{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}]},
        "invalid_blocks",
        "must be one of: plain_text",
    ),
    "button text 76": ({"blocks": [actions(button("b" * 76))]}, "invalid_blocks", "less than 76"),
    "button value 2001": (
        {"blocks": [actions(button(value="v" * 2001))]},
        "invalid_blocks",
        "less than 2001",
    ),
    "action_id 256": (
        {"blocks": [actions(button(action_id="a" * 256))]},
        "invalid_blocks",
        "less than 256",
    ),
    "26 elements": (
        {"blocks": [actions(*[button(action_id=f"a{i}") for i in range(26)])]},
        "invalid_blocks",
        "no more than 25",
    ),
    "duplicate action_id": (
        {"blocks": [actions(button(), button())]},
        "invalid_blocks",
        "duplicate action_id",
    ),
    "duplicate block_id": (
        {"blocks": [{"type": "divider", "block_id": "b"}] * 2},
        "invalid_blocks",
        "duplicate block_id",
    ),
    "unknown block": ({"blocks": [{"type": "carousel"}]}, "invalid_blocks", "unsupported block"),
    "text without type": (
        {"blocks": [{"type": "section", "text": {"text": "hi"}}]},
        "invalid_blocks",
        "missing required field: type",
    ),
    "text bad type": ({"blocks": [section("hi", "markdown")]}, "invalid_blocks", "must be one of"),
    "empty text": ({"blocks": [section("")]}, "invalid_blocks", "more than 0 characters"),
    "no text": ({"text": ""}, "no_text", ""),
    "too long": (
        {"text": "t" * 7001, "blocks": [section("s" * 3000), section("s" * 3000)]},
        "msg_too_long",
        "13001 characters",
    ),
}


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
@pytest.mark.parametrize("case", REJECTED, ids=list(REJECTED))
def test_slack_rejects(slack: FakeSlack, client: WebClient, case: str) -> None:
    kwargs, error, detail = REJECTED[case]
    response = error_of(client, **kwargs).response
    assert (response.status_code, response["ok"], response["error"]) == (200, False, error)
    assert detail in " ".join(response.get("errors", []))
    assert slack.posted == [] and slack.rejected[0].reason.startswith(error)


@pytest.mark.parametrize(
    "blocks",
    [
        [{"type": "divider"}] * 50,
        [section("x" * 3000)],
        [{"type": "header", "text": {"type": "plain_text", "text": "h" * 150}}],
        [actions(button("b" * 75, "v" * 2000, "a" * 255))],
        [actions(*[button(action_id=f"a{i}") for i in range(25)])],
    ],
    ids=["50 blocks", "section 3000", "header 150", "button limits", "25 elements"],
)
def test_slack_accepts_at_the_limits(client: WebClient, blocks: list) -> None:
    assert client.chat_postMessage(channel=CHANNEL, text="t", blocks=blocks)["ok"] is True


def test_total_text_rule_is_inclusive_at_13000(client: WebClient) -> None:
    blocks = [section("s" * 3000), section("s" * 3000)]
    assert message_text_length("t" * 7000, blocks) == MAX_MESSAGE_TEXT
    assert client.chat_postMessage(channel=CHANNEL, text="t" * 7000, blocks=blocks)["ok"]


def test_home_tab_allows_100_blocks_not_101(slack: FakeSlack, client: WebClient) -> None:
    divider = {"type": "divider"}
    client.views_publish(user_id="U0ALICE01", view={"type": "home", "blocks": [divider] * 100})
    with pytest.raises(SlackApiError) as caught:
        client.views_publish(user_id="U0ALICE01", view={"type": "home", "blocks": [divider] * 101})
    assert caught.value.response["error"] == "invalid_blocks"
    assert "[json-pointer:/view/blocks]" in caught.value.response["errors"][0]


# ----- strict mrkdwn escaping ----------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "R&D",
        "a < b",
        "<b>bold</b>",
        "&copy; 2024",
        "&quot;quoted&quot;",
        "<https://arxiv.org/list?a=1&b=2|list>",
        "<@alice>",
        "<not a link>",
        "x <",
    ],
)
def test_unescaped_markup_is_rejected(client: WebClient, text: str) -> None:
    for kwargs in ({"text": text}, {"text": "fallback", "blocks": [section(text)]}):
        response = error_of(client, **kwargs).response
        assert response["error"] == "invalid_blocks"
        assert "unescaped markup" in response["errors"][0]


@pytest.mark.parametrize(
    "text",
    [
        "R&amp;D &lt;tag&gt; a > b",
        "> quoted line",
        "<https://arxiv.org/list?a=1&amp;b=2|list> and <http://x.org>",
        "<mailto:a@b.org|mail> <@U0ALICE01> <@W0ALICE01|alice> <#C0PAPERS1|papers>",
        "<!here> <!channel> <!everyone> <!subteam^S0TEAM001|@ml>",
        "<!date^1700000000^{date_short} at {time}|Nov 14>",
        escape_mrkdwn("p < 0.05 & n > 10 <script>"),
    ],
)
def test_escaped_markup_is_accepted(client: WebClient, text: str) -> None:
    assert mrkdwn_problem(text) is None
    assert client.chat_postMessage(channel=CHANNEL, text=text, blocks=[section(text)])["ok"]


def test_plain_text_and_non_mrkdwn_are_not_escape_checked(client: WebClient) -> None:
    client.chat_postMessage(
        channel=CHANNEL, text="fallback", blocks=[section("R&D <b>", "plain_text")]
    )
    client.chat_postMessage(channel=CHANNEL, text="R&D <b>", mrkdwn=False)
    with serve_fake_slack(strict_mrkdwn=False) as lenient:
        WebClient(token=lenient.bot_token, base_url=lenient.api_url).chat_postMessage(
            channel=CHANNEL, text="R&D", blocks=[section("a < b")]
        )
        assert len(lenient.posted) == 1


def test_check_blocks_reports_json_pointers() -> None:
    errors = check_blocks([section("ok"), {"type": "header", "text": {"type": "plain_text"}}])
    assert errors == ["missing required field: text [json-pointer:/blocks/1/text/text]"]


# ----- faults and rate limits ----------------------------------------------------------------
@pytest.mark.parametrize(
    "error",
    ["channel_not_found", "not_in_channel", "is_archived", "account_inactive", "invalid_auth"],
)
def test_injected_errors(slack: FakeSlack, client: WebClient, error: str) -> None:
    slack.fail_next("chat.postMessage", error)
    response = error_of(client, text="x").response
    assert (response.status_code, response["error"]) == (200, error)
    assert client.chat_postMessage(channel=CHANNEL, text="again")["ok"]  # only once
    assert [r.error for r in slack.rejected] == [error]


def test_faults_for_one_channel_and_forever(slack: FakeSlack, client: WebClient) -> None:
    slack.fail_next("*", "not_in_channel", channel="C0SECRET1", times=None)
    for _ in range(3):
        with pytest.raises(SlackApiError, match="not_in_channel"):
            client.chat_postMessage(channel="C0SECRET1", text="x")
    assert client.chat_postMessage(channel=CHANNEL, text="x")["ok"]


def test_workspace_state_drives_errors(slack: FakeSlack, client: WebClient) -> None:
    slack.add_channel("C0ARCHIVE", is_archived=True)
    slack.add_channel("C0OUTSIDE", is_member=False)
    for channel, error in [
        ("C0ARCHIVE", "is_archived"),
        ("C0OUTSIDE", "not_in_channel"),
        ("NOT A CHANNEL", "channel_not_found"),
    ]:
        assert error_of(client, channel=channel, text="x").response["error"] == error


def test_ratelimited_fault_is_a_429_with_retry_after(slack: FakeSlack, client: WebClient) -> None:
    slack.fail_next("chat.postMessage", "ratelimited", retry_after=7)
    response = error_of(client, text="x").response
    assert (response.status_code, response["error"]) == (429, "ratelimited")
    assert response.headers["Retry-After"] == "7"
    assert slack.too_many_requests == 1


@pytest.fixture
def no_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    """slack_sdk's retry handlers sleep Retry-After + random(); make that 0 s for Retry-After 0."""
    monkeypatch.setattr(builtin_handlers, "random", SimpleNamespace(random=lambda: 0.0))


@pytest.mark.usefixtures("no_jitter")
def test_retry_handler_retries_after_429(slack: FakeSlack) -> None:
    client = WebClient(token=slack.bot_token, base_url=slack.api_url)
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=1))
    slack.fail_next("chat.postMessage", "ratelimited", retry_after=0)
    assert client.chat_postMessage(channel=CHANNEL, text="x")["ok"] is True
    assert slack.calls == ["chat.postMessage", "chat.postMessage"]
    assert slack.too_many_requests == 1 and len(slack.posted) == 1


@needs_aiohttp
async def test_async_retry_handler_retries_after_429(
    slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from slack_sdk.http_retry import builtin_async_handlers
    from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
    from slack_sdk.web.async_client import AsyncWebClient

    monkeypatch.setattr(builtin_async_handlers, "random", SimpleNamespace(random=lambda: 0.0))
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    slack.fail_next("chat.postMessage", "ratelimited", retry_after=3)
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel=CHANNEL, text="x")
    assert caught.value.response.headers["Retry-After"] == "3"
    client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=1))
    slack.fail_next("chat.postMessage", "ratelimited", retry_after=0)
    assert (await client.chat_postMessage(channel=CHANNEL, text="x"))["ok"] is True
    assert slack.too_many_requests == 2 and len(slack.posted) == 1


def test_rate_limit_per_channel(slack: FakeSlack, client: WebClient) -> None:
    slack.rate_limit(per_channel_per_second=1.0)
    client.chat_postMessage(channel=CHANNEL, text="1")
    response = error_of(client, text="2").response
    assert (response.status_code, response.headers["Retry-After"]) == (429, "1")
    client.chat_postMessage(channel="C0OTHER01", text="other channel")
    client.auth_test()  # other methods are not limited
    slack.rate_limit(per_channel_per_second=3.0)
    for text in "abc":
        client.chat_postMessage(channel="C0THIRD01", text=text)
    assert error_of(client, channel="C0THIRD01", text="d").response.status_code == 429
    assert slack.too_many_requests == 2
    slack.rate_limit(enabled=False)
    client.chat_postMessage(channel=CHANNEL, text="unlimited")


def test_thread_safe_under_concurrent_posts(slack: FakeSlack) -> None:
    def post(index: int) -> None:
        client = WebClient(token=slack.bot_token, base_url=slack.api_url)
        for part in range(5):
            client.chat_postMessage(channel=f"C0CHAN{index:03d}", text=f"{index}.{part}")

    threads = [threading.Thread(target=post, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    slack.wait_until(lambda fake: len(fake.posted) == 40)
    for thread in threads:
        thread.join()
    assert len({p.ts for p in slack.posted}) == 40
    assert [p.text for p in slack.messages_for("C0CHAN003")] == [f"3.{i}" for i in range(5)]


# ----- response_url and the requests Slack sends the app -----------------------------------
def test_response_url_posts_are_recorded(slack: FakeSlack) -> None:
    url = slack.response_url()
    webhook = WebhookClient(url)
    answer = webhook.send(text="Following *cs.LG*", response_type="ephemeral")
    assert (answer.status_code, answer.body) == (200, "ok")
    bad = webhook.send(text="fallback", blocks=[section("R&D")])
    assert bad.status_code == 400 and bad.body.startswith("invalid_blocks")
    [response] = slack.responses
    assert response.response_id == url.rsplit("/", 1)[1]
    assert response.payload == {"text": "Following *cs.LG*", "response_type": "ephemeral"}
    assert slack.rejected[0].method == "response_url"
    for _ in range(4):
        assert webhook.send(text="more").status_code == 200
    assert webhook.send(text="sixth").status_code == 404  # five uses per response_url


def test_signed_requests_verify() -> None:
    verifier = SignatureVerifier(SECRET)
    body = slash_command_body(text="follow cs.LG", user_id="U0ALICE01")
    headers = signed_request_headers(body, SECRET)
    assert verifier.is_valid_request(body, headers)
    assert not verifier.is_valid_request(body.replace(b"cs.LG", b"cs.AI"), headers)
    assert not SignatureVerifier("other-secret").is_valid_request(body, headers)
    stale = signed_request_headers(body, SECRET, timestamp=int(time.time()) - 600)
    assert not verifier.is_valid_request(body, stale)
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    fields = {name: values[0] for name, values in parse_qs(body.decode()).items()}
    assert (fields["command"], fields["text"], fields["user_id"]) == (
        "/paperwatch",
        "follow cs.LG",
        "U0ALICE01",
    )


def test_block_action_and_event_bodies() -> None:
    body = block_action_body("follow", "cs.LG", "U0ALICE01", CHANNEL, message_ts="1.000002")
    payload = json.loads(parse_qs(body.decode())["payload"][0])
    assert payload["type"] == "block_actions"
    assert payload["actions"][0] | {"action_ts": ""} == {
        "action_id": "follow",
        "block_id": "actions",
        "text": {"type": "plain_text", "text": "Button", "emoji": True},
        "type": "button",
        "value": "cs.LG",
        "action_ts": "",
    }
    assert payload["container"]["message_ts"] == "1.000002"
    home = json.loads(parse_qs(block_action_body("x", channel_id=None).decode())["payload"][0])
    assert home["container"]["type"] == "view" and "channel" not in home
    event = event_body(app_home_opened_event("U0ALICE01"), event_id="Ev0001")
    envelope = json.loads(event)
    assert (envelope["type"], envelope["event_id"], envelope["event"]["type"]) == (
        "event_callback",
        "Ev0001",
        "app_home_opened",
    )
    headers = signed_request_headers(event, SECRET)
    assert headers["Content-Type"] == "application/json"
    assert SignatureVerifier(SECRET).is_valid_request(event, headers)


def test_slack_bolt_app_handles_a_signed_slash_command(slack: FakeSlack) -> None:
    from slack_bolt import App, BoltRequest

    client = WebClient(token=slack.bot_token, base_url=slack.api_url)
    app = App(client=client, signing_secret=SECRET, process_before_response=True)

    @app.command("/paperwatch")
    def follow(ack: Any, respond: Any, say: Any, command: dict) -> None:
        ack()
        respond(f"Following {escape_mrkdwn(command['text'])}")
        say(text="A topic was followed", blocks=[section("*cs.LG* &amp; more")])

    body = slash_command_body(text="cs.LG & cs.AI", response_url=slack.response_url())
    headers = signed_request_headers(body, SECRET)
    assert app.dispatch(BoltRequest(body=body.decode(), headers=headers)).status == 200
    assert [r.payload["text"] for r in slack.responses] == ["Following cs.LG &amp; cs.AI"]
    assert [p.text for p in slack.messages_for(CHANNEL)] == ["A topic was followed"]
    assert slack.calls == ["auth.test", "chat.postMessage"]  # App() checks its token first
    forged = headers | {"X-Slack-Signature": "v0=" + "0" * 64}
    assert app.dispatch(BoltRequest(body=body.decode(), headers=forged)).status == 401


# ----- Socket Mode ---------------------------------------------------------------------------
def test_apps_connections_open_takes_only_the_app_token(slack: FakeSlack) -> None:
    for token, error in (
        (slack.bot_token, "not_allowed_token_type"),
        ("xapp-1-A0OTHER-0-wrong", "invalid_auth"),
    ):
        with pytest.raises(SlackApiError) as refused:
            WebClient(base_url=slack.api_url).apps_connections_open(app_token=token)
        assert refused.value.response["error"] == error
    with pytest.raises(SlackApiError) as elsewhere:  # the app token is no bot token
        WebClient(token=slack.app_token, base_url=slack.api_url).auth_test()
    assert elsewhere.value.response["error"] == "invalid_auth"
    opened = WebClient(base_url=slack.api_url).apps_connections_open(app_token=slack.app_token)
    assert opened["url"].startswith(slack.socket.url + "/link/?ticket=")
    assert [(r.method, r.error) for r in slack.rejected] == [
        ("apps.connections.open", "not_allowed_token_type"),
        ("apps.connections.open", "invalid_auth"),
        ("auth.test", "invalid_auth"),
    ]


@needs_aiohttp
async def test_socket_mode_hello_envelopes_acks_and_disconnect(slack: FakeSlack) -> None:
    import aiohttp

    socket = slack.socket
    url = socket.issue_url()
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url) as ws:
            hello = await ws.receive_json(timeout=5)
            assert (hello["type"], hello["num_connections"]) == ("hello", 1)
            assert hello["connection_info"]["app_id"] == slack.app_id
            command = socket.send_slash_command("follow cs.LG", channel_id="C0OTHER01")
            envelope = await ws.receive_json(timeout=5)
            assert (envelope["envelope_id"], envelope["type"]) == (command, "slash_commands")
            assert envelope["accepts_response_payload"] is True
            payload = envelope["payload"]  # the HTTP form's fields, as strings
            assert (payload["command"], payload["text"]) == ("/paperwatch", "follow cs.LG")
            assert payload["channel_id"] == "C0OTHER01"
            assert all(isinstance(value, str) for value in payload.values())
            button = socket.send_block_action("pw_follow_0_0", "v")
            event = socket.send_event(app_home_opened_event("U0ALICE01"), event_id="Ev0SOCK01")
            pressed, opened = await ws.receive_json(timeout=5), await ws.receive_json(timeout=5)
            assert (pressed["type"], pressed["accepts_response_payload"]) == ("interactive", False)
            assert pressed["payload"]["actions"][0]["value"] == "v"
            assert (opened["type"], opened["payload"]["event_id"]) == ("events_api", "Ev0SOCK01")

            await ws.send_json({"envelope_id": command, "payload": {"text": "ok"}})
            await ws.send_json({"envelope_id": button})
            await ws.send_json({"envelope_id": button})  # twice
            await ws.send_str("not json")
            assert (await socket.async_wait_for_ack(command)).payload == {"text": "ok"}
            assert (await socket.async_wait_for_ack(button)).connection == 1
            await socket.async_wait_until(lambda s: len(s.unexpected) == 2)
            assert event not in socket.acks

            assert socket.disconnect() == 1
            assert (await ws.receive_json(timeout=5))["reason"] == "refresh_requested"
            assert not socket.ready  # nothing more is sent on a connection told to go
        await socket.async_wait_until(lambda s: s.connections[0].closed)
        assert socket.connections[0].closed_by == "app"
        with pytest.raises(aiohttp.WSServerHandshakeError):  # a ticket works once
            await session.ws_connect(url)
    assert socket.refused == 1


@needs_aiohttp
async def test_socket_mode_stop_closes_open_connections(slack: FakeSlack) -> None:
    import aiohttp

    url = slack.socket.issue_url()
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        assert (await ws.receive_json(timeout=5))["type"] == "hello"
        stopping = asyncio.create_task(asyncio.to_thread(slack.socket.stop))
        closing = await ws.receive(timeout=5)
        assert (closing.type, closing.data) == (aiohttp.WSMsgType.CLOSE, 1001)
        await stopping
    [connection] = slack.socket.connections
    assert (connection.closed, connection.closed_by) == (True, "slack")
