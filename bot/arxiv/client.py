"""HTTP access to arXiv: the only module that talks to arXiv's servers.

arXiv's terms ask robots to be gentle; this client is:
- one `httpx.AsyncClient` with a single connection, and a descriptive User-Agent;
- at most one request every `ARXIV_MIN_REQUEST_INTERVAL` seconds across all arXiv
  traffic of the process (retries included), via one shared `RequestSpacer`;
- conditional GET (ETag / Last-Modified) so an unchanged feed costs arXiv nothing;
- `Retry-After` honoured on 429 and 503 (and every later request waits for it too),
  but never more than `ARXIV_MAX_RETRY_AFTER` seconds (1 h): a server cannot stall us for years;
- exponential backoff with jitter (tenacity) on other 5xx, resets and timeouts, and
  (`get_feed`) on a body cut short or an HTML page served in place of the feed;
- no retry when no connection could be made at all (refused, a name that does not
  resolve, no route): that is this machine's network or settings, which five attempts in
  15 s will not fix. The call fails at once with one line naming the host and what to
  check; the bot's next scheduled poll tries again;
- the spacing holds across processes too when a `RequestStamp` is given: the time of
  the last request is kept in the database, so a restarted process waits its turn.

arXiv's answers are not trusted for size either: a body is streamed and decoded
incrementally, and refused (not retried) once it exceeds `ARXIV_MAX_RESPONSE_MIB`
decompressed. Memory stays within that cap plus one decoded network read.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    retry_if_not_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from bot.arxiv.responses import (
    ERROR_BODY_LIMIT,
    MIB,
    ArxivBusyError,
    ArxivHTTPError,
    ArxivTransientError,
    ArxivUnreachableError,
    Fetched,
    error_detail,
    parse_or_retry,
    parse_retry_after,
    read_capped,
)
from bot.arxiv.spacing import RequestSpacer, RequestStamp, Sleep
from bot.config import Settings
from bot.network import connect_failure, unreachable

__all__ = ["USER_AGENT", "ArxivClient", "RequestSpacer", "RequestStamp"]

log = logging.getLogger(__name__)

USER_AGENT = (
    f"paperwatch/0.1 (arXiv topic-alert bot; polite: 1 request per 3 s; httpx/{httpx.__version__})"
)


def _conditional(etag: str | None, last_modified: str | None) -> dict[str, str]:
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


class ArxivClient:
    """Fetches arXiv responses as bytes (`get`) or parsed (`get_feed`, via `bot.arxiv.parse`)."""

    def __init__(
        self,
        settings: Settings,
        http: httpx.AsyncClient | None = None,
        *,
        spacer: RequestSpacer | None = None,
        stamp: RequestStamp | None = None,
        sleep: Sleep = asyncio.sleep,
        attempts: int = 5,
        max_backoff: float = 120.0,
        max_retry_after: float = 600.0,
    ) -> None:
        """`max_retry_after`: a longer Retry-After is not waited out inside one call (the
        call fails and the next poll tries again); the wait itself, for this call and for
        every later request, is capped at `settings.arxiv_max_retry_after`."""
        self._settings = settings
        self._http = http or httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT},
            timeout=httpx.Timeout(60.0, connect=15.0),
            follow_redirects=True,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        self._spacer = spacer or RequestSpacer(
            settings.arxiv_min_request_interval, sleep=sleep, shared=stamp
        )
        self._sleep = sleep
        self._attempts = attempts
        self._backoff = wait_random_exponential(multiplier=1, max=max_backoff)
        self._max_retry_after = max_retry_after
        self._retry_after_cap = settings.arxiv_max_retry_after
        self._max_body = int(settings.arxiv_max_response_mib * MIB)

    @property
    def rss_url(self) -> str:
        base = self._settings.arxiv_rss_url.rstrip("/") + "/"
        return base + "+".join(self._settings.arxiv_categories)

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, ArxivBusyError) and error.retry_after is not None:
            return min(error.retry_after, self._retry_after_cap)
        return self._backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "arxiv retry attempt=%d wait=%.1fs reason=%s", state.attempt_number, wait, error
        )

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            stop=stop_after_attempt(self._attempts),
            wait=self._wait,
            retry=(
                retry_if_exception_type(ArxivTransientError)
                & retry_if_not_exception_type(ArxivUnreachableError)
            ),
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
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
        headers = _conditional(etag, last_modified)
        async for attempt in self._retrying():
            with attempt:
                return await self._once(url, params, headers)
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def get_feed(
        self,
        url: str,
        params: dict[str, str] | None = None,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> Fetched:
        """`get`, parsed into `Fetched.feed` (None when not modified).

        A body cut short or an HTML page in place of the feed is a transient fault,
        retried with backoff like a 5xx; after the last attempt it is raised as
        ArxivUnreadableError. Other FeedErrors (an error document, a refused DOCTYPE)
        are raised at once.
        """
        headers = _conditional(etag, last_modified)
        async for attempt in self._retrying():
            with attempt:
                fetched = await self._once(url, params, headers)
                if fetched.not_modified:
                    return fetched
                return replace(fetched, feed=parse_or_retry(fetched.body))
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def _once(
        self, url: str, params: dict[str, str] | None, headers: dict[str, str]
    ) -> Fetched:
        await self._spacer.wait()
        log.info("arxiv request url=%s params=%s", url, params or {})
        try:
            async with self._http.stream("GET", url, params=params, headers=headers) as response:
                return await self._answer(url, response, headers)
        except httpx.ConnectError as exc:
            raise ArxivUnreachableError(self._unreachable(url, exc)) from exc
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise ArxivTransientError(f"{url}: {type(exc).__name__}") from exc
        except httpx.DecodingError as exc:
            raise ArxivTransientError(f"{url}: undecodable body ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise ArxivHTTPError(f"cannot reach {url}: {type(exc).__name__}") from exc

    def _unreachable(self, url: str, exc: Exception) -> str:
        """The one line for a failed connection: the host, why, and the setting to check."""
        oai = url.startswith(self._settings.arxiv_oai_url)
        setting = "ARXIV_OAI_URL" if oai else "ARXIV_RSS_URL"
        return unreachable("arXiv", url, connect_failure(exc), setting)

    async def _answer(self, url: str, response: httpx.Response, headers: dict[str, str]) -> Fetched:
        """Turn a streamed response into a Fetched or the matching ArxivHTTPError."""
        status = response.status_code
        if status == 304:
            return Fetched(
                b"",
                not_modified=True,
                etag=headers.get("If-None-Match"),
                last_modified=headers.get("If-Modified-Since"),
            )
        if status in (429, 503):
            raise self._busy(url, status, response.headers.get("Retry-After"))
        if status >= 500:
            raise ArxivTransientError(f"{url} answered HTTP {status}")
        if status != 200:
            body = await read_capped(url, response, ERROR_BODY_LIMIT, cut=True)
            raise ArxivHTTPError(f"{url} answered HTTP {status}{error_detail(body)}")
        return Fetched(
            await read_capped(url, response, self._max_body),
            etag=response.headers.get("ETag"),
            last_modified=response.headers.get("Last-Modified"),
        )

    def _busy(self, url: str, status: int, header: str | None) -> ArxivHTTPError:
        """429/503: hold every later request back for the (capped) Retry-After."""
        asked = parse_retry_after(header)
        if asked is None:
            return ArxivBusyError(f"{url} answered HTTP {status}", None)
        wait = min(asked, self._retry_after_cap)
        if wait < asked:
            log.warning(
                "arxiv asked us to wait %.0f s; waiting at most %.0f s url=%s", asked, wait, url
            )
        self._spacer.hold_off(wait)
        if wait > self._max_retry_after:
            return ArxivHTTPError(f"{url} answered HTTP {status}; asked us to wait {asked:.0f} s")
        return ArxivBusyError(f"{url} answered HTTP {status}", wait)

    async def fetch_rss(
        self, *, etag: str | None = None, last_modified: str | None = None
    ) -> Fetched:
        """Today's announcement for the configured categories, in one combined request,
        parsed (`Fetched.feed`)."""
        return await self.get_feed(self.rss_url, etag=etag, last_modified=last_modified)

    async def aclose(self) -> None:
        await self._http.aclose()
