"""HTTP access to arXiv: the only module that talks to arXiv's servers.

arXiv's terms ask robots to be gentle; this client is:
- one `httpx.AsyncClient` with a single connection, and a descriptive User-Agent;
- at most one request every `ARXIV_MIN_REQUEST_INTERVAL` seconds across all arXiv
  traffic of the process (retries included), via one shared `RequestSpacer`;
- conditional GET (ETag / Last-Modified) so an unchanged feed costs arXiv nothing;
- `Retry-After` honoured on 429 and 503 (and every later request waits for it too);
- exponential backoff with jitter (tenacity) on other 5xx, resets and timeouts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from bot.arxiv.parse import ArxivApiError, FeedError, parse_feed
from bot.config import Settings

log = logging.getLogger(__name__)

USER_AGENT = (
    f"paperwatch/0.1 (arXiv topic-alert bot; polite: 1 request per 3 s; httpx/{httpx.__version__})"
)

Sleep = Callable[[float], Awaitable[None]]


class ArxivHTTPError(RuntimeError):
    """arXiv did not give us a usable response; the message says why in one line."""


class ArxivTransientError(ArxivHTTPError):
    """Worth retrying: a 5xx, a reset connection or a timeout."""


class ArxivBusyError(ArxivTransientError):
    """429 or 503: arXiv asked us to come back after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: float | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RequestSpacer:
    """Keeps successive requests at least `interval` seconds apart (clock injectable)."""

    def __init__(
        self,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._next = float("-inf")
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            delay = self._next - self._clock()
            if delay > 0:
                await self._sleep(delay)
            self._next = self._clock() + self.interval

    def hold_off(self, seconds: float) -> None:
        """No request before `seconds` from now (a server's Retry-After)."""
        self._next = max(self._next, self._clock() + seconds)


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response body, or `not_modified` when the validators still hold."""

    body: bytes
    not_modified: bool = False
    etag: str | None = None
    last_modified: str | None = None


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
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


def _error_detail(body: bytes) -> str:
    """The export API explains a 400 in an Atom error entry: pass its words on."""
    try:
        parse_feed(body)
    except ArxivApiError as exc:
        return f": {exc}"
    except FeedError:
        pass
    return ""


class ArxivClient:
    """Fetches arXiv responses as bytes; parsing is `bot.arxiv.parse`'s job."""

    def __init__(
        self,
        settings: Settings,
        http: httpx.AsyncClient | None = None,
        *,
        spacer: RequestSpacer | None = None,
        sleep: Sleep = asyncio.sleep,
        attempts: int = 5,
        max_backoff: float = 120.0,
        max_retry_after: float = 600.0,
    ) -> None:
        self._settings = settings
        self._http = http or httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT},
            timeout=httpx.Timeout(60.0, connect=15.0),
            follow_redirects=True,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        self._spacer = spacer or RequestSpacer(settings.arxiv_min_request_interval, sleep=sleep)
        self._sleep = sleep
        self._attempts = attempts
        self._backoff = wait_random_exponential(multiplier=1, max=max_backoff)
        self._max_retry_after = max_retry_after

    @property
    def rss_url(self) -> str:
        base = self._settings.arxiv_rss_url.rstrip("/") + "/"
        return base + "+".join(self._settings.arxiv_categories)

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, ArxivBusyError) and error.retry_after is not None:
            return error.retry_after
        return self._backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "arxiv retry attempt=%d wait=%.1fs reason=%s", state.attempt_number, wait, error
        )

    async def get(
        self,
        url: str,
        params: dict[str, str] | None = None,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> Fetched:
        """GET with spacing, retries and conditional headers; raises ArxivHTTPError."""
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._attempts),
            wait=self._wait,
            retry=retry_if_exception_type(ArxivTransientError),
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._once(url, params, headers)
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def _once(
        self, url: str, params: dict[str, str] | None, headers: dict[str, str]
    ) -> Fetched:
        await self._spacer.wait()
        log.info("arxiv request url=%s params=%s", url, params or {})
        try:
            response = await self._http.get(url, params=params, headers=headers)
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise ArxivTransientError(f"{url}: {type(exc).__name__}") from exc
        except httpx.HTTPError as exc:
            raise ArxivHTTPError(f"cannot reach {url}: {type(exc).__name__}") from exc
        status = response.status_code
        if status == 304:
            return Fetched(
                b"",
                not_modified=True,
                etag=headers.get("If-None-Match"),
                last_modified=headers.get("If-Modified-Since"),
            )
        if status in (429, 503):
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if retry_after is not None:
                self._spacer.hold_off(retry_after)
                if retry_after > self._max_retry_after:
                    raise ArxivHTTPError(
                        f"{url} answered HTTP {status}; asked us to wait {retry_after:.0f} s"
                    )
            raise ArxivBusyError(f"{url} answered HTTP {status}", retry_after)
        if status >= 500:
            raise ArxivTransientError(f"{url} answered HTTP {status}")
        if status != 200:
            raise ArxivHTTPError(f"{url} answered HTTP {status}{_error_detail(response.content)}")
        return Fetched(
            response.content,
            etag=response.headers.get("ETag"),
            last_modified=response.headers.get("Last-Modified"),
        )

    async def fetch_rss(
        self, *, etag: str | None = None, last_modified: str | None = None
    ) -> Fetched:
        """Today's announcement for the configured categories, in one combined request."""
        return await self.get(self.rss_url, etag=etag, last_modified=last_modified)

    async def aclose(self) -> None:
        await self._http.aclose()
