"""The outbox's way into Slack: one post per destination under the limiter, and slack_sdk
errors turned into delivery meanings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import ClientError
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import buttons
from bot.adapters.slack.limits import KeyedLimiter
from bot.adapters.slack.render import render
from bot.domain import Chat, Platform, Reply
from bot.ports import Permanent, RateLimited, RecipientGone, Transient

GONE = {"channel_not_found", "not_in_channel", "is_archived", "account_inactive", "invalid_auth"}


def destination(chat: Chat) -> str:
    """Where to post for a chat: its channel id, or the person's user id (a DM)."""
    return chat.external_id.split(":", 1)[-1]


class SlackMessenger:
    """The outbox's way into Slack: slack_sdk errors become delivery meanings."""

    platform = Platform.SLACK

    def __init__(self, client: AsyncWebClient, key: bytes, limiter: KeyedLimiter) -> None:
        self._client = client
        self._key = key
        self._limiter = limiter

    def render(self, chat: Chat, reply: Reply) -> Sequence[dict[str, Any]]:
        return render(reply, lambda button: buttons.encode(button, chat.external_id, self._key))

    async def deliver(self, chat: Chat, message: object) -> None:
        assert isinstance(message, dict)
        channel = destination(chat)
        try:
            async with self._limiter(channel):
                await self._client.chat_postMessage(
                    channel=channel, unfurl_links=False, unfurl_media=False, **message
                )
        except SlackApiError as exc:
            raise _meaning(exc) from exc
        except (ClientError, TimeoutError) as exc:
            raise Transient(str(exc)) from exc


def _meaning(exc: SlackApiError) -> Exception:
    error = str(exc.response.get("error", ""))
    if error in GONE:
        return RecipientGone(error)
    if error == "ratelimited" or exc.response.status_code == 429:
        return RateLimited(float(exc.response.headers.get("Retry-After", 1)), "Slack rate limit")
    if error in _REFUSED_FOR_GOOD:  # this message as it is: retrying cannot help
        return Permanent(f"Slack refused the message: {error}")
    return Transient(f"Slack refused the message: {error}")


# chat.postMessage errors about the message itself (docs.slack.dev, chat.postMessage).
_REFUSED_FOR_GOOD = frozenset(
    {
        "invalid_blocks",
        "invalid_blocks_format",
        "msg_too_long",
        "msg_blocks_too_long",
        "no_text",
        "too_many_attachments",
        "invalid_attachments",
        "invalid_arguments",
        "markdown_text_conflict",
    }
)
