"""HTTP access to arXiv: the only module that talks to arXiv's servers.

One `httpx.AsyncClient` (one connection pool) per process, a descriptive
User-Agent, and at most one request every `ARXIV_MIN_REQUEST_INTERVAL` seconds
across all arXiv traffic of the process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import httpx

from bot.config import Settings

log = logging.getLogger(__name__)

USER_AGENT = f"paperwatch/0.1 (arXiv topic-alert bot; httpx/{httpx.__version__})"


class ArxivHTTPError(RuntimeError):
    """arXiv did not give us a usable response; the message says why in one line."""


class RequestSpacer:
    """Keeps successive requests at least `interval` seconds apart (clock injectable)."""

    def __init__(
        self,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
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


class ArxivClient:
    """Fetches arXiv responses as bytes; parsing is `bot.arxiv.parse`'s job."""

    def __init__(self, settings: Settings, http: httpx.AsyncClient | None = None) -> None:
        self._settings = settings
        self._http = http or httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT},
            timeout=httpx.Timeout(30.0, connect=10.0),
            follow_redirects=True,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        self._spacer = RequestSpacer(settings.arxiv_min_request_interval)

    @property
    def rss_url(self) -> str:
        base = self._settings.arxiv_rss_url.rstrip("/") + "/"
        return base + "+".join(self._settings.arxiv_categories)

    async def get(self, url: str, params: dict[str, str] | None = None) -> bytes:
        await self._spacer.wait()
        log.info("arxiv request url=%s", url)
        try:
            response = await self._http.get(url, params=params)
        except httpx.HTTPError as exc:
            raise ArxivHTTPError(f"cannot reach {url}: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise ArxivHTTPError(f"{url} answered HTTP {response.status_code}")
        return response.content

    async def fetch_rss(self) -> bytes:
        """Today's announcement for the configured categories, in one combined request."""
        return await self.get(self.rss_url)

    async def aclose(self) -> None:
        await self._http.aclose()


async def fetch_daily_feed(settings: Settings) -> bytes:
    client = ArxivClient(settings)
    try:
        return await client.fetch_rss()
    finally:
        await client.aclose()
