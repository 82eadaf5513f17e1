"""No connection to arXiv at all (refused, a name that does not resolve): one attempt and
one line naming the host and what to check. Timeouts keep their polite retries.

Attempts are counted at the transport (what reached, or tried to reach, the port);
every backoff goes to an injected sleep, so nothing here waits.
"""

from __future__ import annotations

import socket

import httpx
import pytest

from bot.arxiv.client import ArxivClient
from bot.arxiv.responses import ArxivTransientError, ArxivUnreachableError
from bot.config import Settings

HINT = "check the network connection, the proxy (HTTPS_PROXY, NO_PROXY) and"


class Counting(httpx.AsyncBaseTransport):
    """Counts each request handed to `inner` (each attempt to reach the port)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.attempts = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.attempts += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def _client(url: str, transport: httpx.AsyncBaseTransport, sleeps: Sleeps) -> ArxivClient:
    settings = Settings(
        ARXIV_RSS_URL=url + "/rss/",
        ARXIV_OAI_URL=url + "/oai",
        ARXIV_CATEGORIES="cs.AI",
        ARXIV_MIN_REQUEST_INTERVAL=0,
    )
    return ArxivClient(settings, httpx.AsyncClient(transport=transport), sleep=sleeps)


async def test_a_refused_connection_is_one_attempt_and_one_line(closed_port: int) -> None:
    transport, sleeps = Counting(httpx.AsyncHTTPTransport()), Sleeps()
    client = _client(f"http://127.0.0.1:{closed_port}", transport, sleeps)
    try:
        with pytest.raises(ArxivUnreachableError) as caught:
            await client.fetch_rss()
    finally:
        await client.aclose()
    assert transport.attempts == 1
    assert sleeps.calls == []  # no backoff either
    assert str(caught.value) == (
        f"cannot reach arXiv at 127.0.0.1:{closed_port} (connection refused); {HINT} ARXIV_RSS_URL"
    )


async def test_the_oai_url_names_its_own_setting(closed_port: int) -> None:
    transport, sleeps = Counting(httpx.AsyncHTTPTransport()), Sleeps()
    client = _client(f"http://127.0.0.1:{closed_port}", transport, sleeps)
    try:
        with pytest.raises(ArxivUnreachableError, match=r"\(connection refused\).*ARXIV_OAI_URL$"):
            await client.get_feed(f"http://127.0.0.1:{closed_port}/oai", {"verb": "Identify"})
    finally:
        await client.aclose()
    assert transport.attempts == 1


async def test_a_name_that_does_not_resolve_is_one_attempt() -> None:
    def no_such_name(request: httpx.Request) -> httpx.Response:
        lookup = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        raise httpx.ConnectError("[Errno -2] Name or service not known") from lookup

    transport, sleeps = Counting(httpx.MockTransport(no_such_name)), Sleeps()
    client = _client("https://export.arxiv.invalid", transport, sleeps)
    try:
        with pytest.raises(ArxivUnreachableError) as caught:
            await client.fetch_rss()
    finally:
        await client.aclose()
    assert transport.attempts == 1 and sleeps.calls == []
    assert str(caught.value).startswith(
        "cannot reach arXiv at export.arxiv.invalid (the host name does not resolve); "
    )


@pytest.mark.parametrize(
    "fault",
    [httpx.ConnectTimeout("timed out"), httpx.ReadTimeout("timed out")],
    ids=["connect timeout", "read timeout"],
)
async def test_timeouts_keep_their_polite_retries(fault: Exception) -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise fault

    transport, sleeps = Counting(httpx.MockTransport(slow)), Sleeps()
    client = _client("http://arxiv.test", transport, sleeps)
    try:
        with pytest.raises(ArxivTransientError) as caught:
            await client.fetch_rss()
    finally:
        await client.aclose()
    assert not isinstance(caught.value, ArxivUnreachableError)
    assert transport.attempts == 5
    assert len(sleeps.calls) == 4


async def test_a_5xx_keeps_its_polite_retries() -> None:
    transport = Counting(httpx.MockTransport(lambda request: httpx.Response(502)))
    sleeps = Sleeps()
    client = _client("http://arxiv.test", transport, sleeps)
    try:
        with pytest.raises(ArxivTransientError, match="HTTP 502"):
            await client.fetch_rss()
    finally:
        await client.aclose()
    assert transport.attempts == 5 and len(sleeps.calls) == 4
