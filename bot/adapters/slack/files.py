"""A file shared with the app on Slack (a BibTeX reading list): which share is for us, and
fetching it.

A file shared in a DM with the app is for it; in a channel only when the message says
"follow" (e.g. "follow like"), since people share files with each other there. The file
becomes `/follow like <its arXiv ids>` (`handlers.like_follows.bibtex_command`). Its bytes
come from `url_private_download` with the bot token, which is only ever sent to Slack's
own file host (or SLACK_API_URL's host: a local fake in tests), and never more than
`limit` + 1 bytes of it are read.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bot.adapters.slack.commands import Origin, origin
from bot.config import Settings
from bot.domain import Reply
from bot.topics.bibtex import MAX_BIB_BYTES
from handlers.like_follows import file_too_large

log = logging.getLogger(__name__)

FILE_HOST = "files.slack.com"


def shared_file(event: dict[str, Any]) -> dict[str, Any] | None:
    """The file of a `message` event that shares one with the app, or None."""
    files = event.get("files")
    if event.get("subtype") != "file_share" or not isinstance(files, list) or not files:
        return None
    if event.get("bot_id") or not isinstance(files[0], dict):
        return None
    in_dm = event.get("channel_type") == "im"
    text = str(event.get("text") or "").strip().lower()
    return files[0] if in_dm or text.startswith("follow") else None


def follow_payload(
    event: dict[str, Any], body: dict[str, Any], text: str = "follow"
) -> dict[str, str]:
    """The /follow a file share asks, as a slash command's fields (`commands.to_command`);
    with another `text`, the fields of whatever else the message says."""
    return {
        "team_id": str(body.get("team_id", "")),
        "channel_id": str(event.get("channel", "")),
        "user_id": str(event.get("user", "")),
        "text": text,
    }


def typed_in_dm(event: dict[str, Any], body: dict[str, Any]) -> tuple[Origin, str] | None:
    """Where a person typed in a DM with the app, and what (a plain message: no file, no
    edit, no bot, not empty), or None."""
    if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
        return None
    text = str(event.get("text") or "").strip()
    return (origin(follow_payload(event, body, text)), text) if text else None


def may_fetch(url: str, api_url: str) -> bool:
    """Is `url` on Slack's file host (or the API's own host)? Only there goes the token."""
    parts = urlsplit(url)
    return parts.scheme in ("https", "http") and parts.hostname in (
        FILE_HOST,
        urlsplit(api_url).hostname,
    )


async def download(url: str, token: str, limit: int, proxy: str | None = None) -> bytes:
    """The file's bytes, at most `limit` + 1 (a longer file is refused by its reader)."""
    headers = {"Authorization": f"Bearer {token}"}
    timeout = aiohttp.ClientTimeout(total=30)
    chunks: list[bytes] = []
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(url, headers=headers, proxy=proxy) as response,
    ):
        response.raise_for_status()
        async for chunk in response.content.iter_chunked(64 * 1024):
            chunks.append(chunk)
            if sum(map(len, chunks)) > limit:
                break
    return b"".join(chunks)


async def read_shared(file: dict[str, Any], settings: Settings, proxy: str | None) -> bytes | Reply:
    """A shared file's bytes, or the one-line refusal (too large, or not fetched)."""
    refused = file_too_large(int(file.get("size") or 0))
    if refused is not None:
        return refused
    url = str(file.get("url_private_download") or "")
    token = settings.slack_bot_token
    if token is None or not may_fetch(url, settings.slack_api_url):
        log.warning("slack file not fetched: not on Slack's file host url=%s", url)
        return Reply.text("I could not read that file. Nothing was changed.", is_error=True)
    try:
        return await download(url, token.get_secret_value(), MAX_BIB_BYTES, proxy)
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("slack file download failed: %s", exc)
        return Reply.text("I could not fetch that file. Nothing was changed.", is_error=True)
