"""What arXiv answered: the error meanings, the fetched body, and reading it within its cap.

`bot.arxiv.client` sends the requests and decides what to retry; the errors here say what
went wrong in one line each, and `ArxivTransientError` (with its subclasses) marks what is
worth another request. A body is read chunk by chunk and never beyond its cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from bot.arxiv.parse import ArxivApiError, Feed, FeedError, InvalidXmlError, NotXmlError, parse_feed

MIB = 1024 * 1024
# An error page is read only this far: enough for the export API's explanation.
ERROR_BODY_LIMIT = 64 * 1024


class ArxivHTTPError(RuntimeError):
    """arXiv did not give us a usable response; the message says why in one line."""


class ArxivTransientError(ArxivHTTPError):
    """Worth retrying: a 5xx, a reset connection or a timeout."""


class ArxivUnreachableError(ArxivTransientError):
    """No connection could be made (refused, unresolvable name, no route). Transient, but
    not retried within the call: the message says which host and what to check."""


class ArxivUnreadableError(ArxivTransientError):
    """A 200 whose body is no feed: cut short in transit, or an HTML page. Retried."""


class ArxivTooLargeError(ArxivHTTPError):
    """The body grew past the size cap; `downloaded` bytes had come off the wire."""

    def __init__(self, message: str, downloaded: int) -> None:
        super().__init__(message)
        self.downloaded = downloaded


class ArxivBusyError(ArxivTransientError):
    """429 or 503: arXiv asked us to come back after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: float | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response body, or `not_modified` when the validators still hold."""

    body: bytes
    not_modified: bool = False
    etag: str | None = None
    last_modified: str | None = None
    feed: Feed | None = None  # set by `get_feed`


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date (unclamped)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def error_detail(body: bytes) -> str:
    """The export API explains a 400 in an Atom error entry: pass its words on."""
    try:
        parse_feed(body)
    except ArxivApiError as exc:
        return f": {exc}"
    except FeedError:
        pass
    return ""


def parse_or_retry(body: bytes) -> Feed:
    """parse_feed, with the faults worth another request turned into ArxivUnreadableError."""
    try:
        return parse_feed(body)
    except (NotXmlError, InvalidXmlError) as exc:
        raise ArxivUnreadableError(str(exc)) from exc


async def read_capped(
    url: str, response: httpx.Response, limit: int, *, cut: bool = False
) -> bytes:
    """The decoded body, read chunk by chunk and never beyond `limit` bytes.

    Past the limit: with `cut`, what was read so far; otherwise ArxivTooLargeError, and
    leaving the `stream()` block closes the connection without reading the rest.
    """
    declared = response.headers.get("Content-Length", "")
    plain = "Content-Encoding" not in response.headers
    if not cut and plain and declared.isdigit() and int(declared) > limit:
        raise _too_large(url, limit, response.num_bytes_downloaded)
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.aiter_bytes():
        total += len(chunk)
        if total > limit:
            if cut:
                chunks.append(chunk[: limit - total + len(chunk)])
                break
            raise _too_large(url, limit, response.num_bytes_downloaded)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(url: str, limit: int, downloaded: int) -> ArxivTooLargeError:
    return ArxivTooLargeError(
        f"{url}: response larger than {limit / MIB:g} MiB decompressed; refused "
        "(ARXIV_MAX_RESPONSE_MIB)",
        downloaded,
    )
