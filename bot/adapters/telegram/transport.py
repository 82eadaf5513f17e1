"""PTB's HTTP requests made with aiohttp instead of its default httpx.

python-telegram-bot builds every Bot API call itself (parameters, JSON, error mapping,
the typed answer) and hands only the HTTP exchange to a `BaseRequest`; PTB documents
that class as the place to plug in another asyncio HTTP library. Its default,
`HTTPXRequest`, cost 3.1-3.3 ms of CPU per sendMessage on our 2-core machine, most of it
in httpx, httpcore and anyio; the same calls through aiohttp (whose HTTP parser is
compiled) cost 1.15-1.25 ms (both with form bodies, 2026-11-29), and the outbox worker
sends hundreds of messages a second (`bench/bench_delivery.py`). aiohttp is already
here for Slack's async clients.

Timeouts keep PTB's meanings and defaults: `read` for each read of the answer, `connect`
for opening a connection, `pool` for waiting for a free one (aiohttp's `connect` covers
the wait and the opening, so it gets their sum), and `write` bounds the whole exchange
together with the others, since aiohttp has no timeout on writes alone.

The bot's token is part of every Bot API URL, and some aiohttp errors quote the URL
("Connection timeout to host http://.../bot<token>/sendMessage"). Errors leave here as
PTB's `TimedOut` or `NetworkError` with the URL's path masked, and without the aiohttp
exception chained to them, so no log, traceback or outbox error shows the token. A
connection that could not be made at all is a `ConnectFailed` (a `NetworkError`) whose
`reason` keeps the few words the chain would have told ("connection refused"), for the
one line the start-up prints (`bot.network`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.network import connect_failure, host_of


def _masked(exc: BaseException, url: str) -> str:
    """The error's text with the URL's path (which holds the token) replaced."""
    path = urlsplit(url).path
    text = f"aiohttp.{type(exc).__name__}: {exc}"
    return text.replace(path, "/…") if path.strip("/") else text


class ConnectFailed(NetworkError):
    """No connection to the Bot API server (or to the proxy); `reason` says why, briefly."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def _why(exc: aiohttp.ClientConnectorError, proxy: str | None) -> str:
    reason = connect_failure(exc)
    if isinstance(exc, aiohttp.ClientProxyConnectionError) and proxy:
        return f"the proxy {host_of(proxy)}: {reason}"
    return reason


def _sum(*parts: float | None) -> float | None:
    """None (no limit) if any part has no limit."""
    return None if any(part is None for part in parts) else sum(parts)  # type: ignore[misc]


class AiohttpRequest(BaseRequest):
    """A `telegram.request.BaseRequest` on one `aiohttp.ClientSession` (HTTP/1.1 keep-alive)."""

    __slots__ = ("_defaults", "_media_write_timeout", "_pool_size", "_proxies", "_session")

    def __init__(
        self,
        connection_pool_size: int = 1,
        *,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
    ) -> None:
        self._pool_size = connection_pool_size
        self._defaults = {
            "read": read_timeout,
            "write": write_timeout,
            "connect": connect_timeout,
            "pool": pool_timeout,
        }
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None
        self._proxies: dict[str, str | None] = {}

    @property
    def read_timeout(self) -> float | None:
        return self._defaults["read"]

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._proxies.clear()
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size)
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    def _proxy(self, url: str) -> str | None:
        """The proxy from HTTPS_PROXY/HTTP_PROXY/NO_PROXY, as httpx (PTB's default) would use.

        Looked up once per URL: aiohttp's own `trust_env` reads the environment and
        ~/.netrc (in a thread) on every request.
        """
        try:
            return self._proxies[url]
        except KeyError:
            parts = urlsplit(url)
            proxy = None
            if not proxy_bypass(parts.hostname or ""):
                proxy = getproxies().get(parts.scheme)
            self._proxies[url] = proxy
            return proxy

    def _timeout(self, files: bool, **given: Any) -> aiohttp.ClientTimeout:
        chosen: dict[str, float | None] = {}
        for name, value in given.items():
            if value is BaseRequest.DEFAULT_NONE:  # not given for this call: the default
                value = self._defaults[name]
                if name == "write" and files:
                    value = self._media_write_timeout
            chosen[name] = value
        read, write, connect, pool = (chosen[k] for k in ("read", "write", "connect", "pool"))
        return aiohttp.ClientTimeout(
            total=_sum(pool, connect, write, read),
            connect=_sum(pool, connect),
            sock_connect=connect,
            sock_read=read,
        )

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        files = bool(request_data and request_data.contains_files)
        timeout = self._timeout(
            files,
            read=read_timeout,
            write=write_timeout,
            connect=connect_timeout,
            pool=pool_timeout,
        )
        headers = {"User-Agent": self.USER_AGENT}
        body: Any = None
        if files:
            assert request_data is not None
            body = aiohttp.FormData(request_data.json_parameters)
            for name, (filename, content, mimetype) in request_data.multipart_data.items():
                body.add_field(name, content, filename=filename, content_type=mimetype)
        elif request_data is not None:
            # A JSON body, encoded by the C json module; url-encoding a long message costs
            # more than any other step of the send. PTB writes non-string values as JSON
            # text, as it does for forms; the Bot API server reads a JSON string value as
            # that text and any other value as its JSON, so both bodies mean the same.
            body = request_data.json_payload
            headers["Content-Type"] = "application/json"
        proxy = self._proxy(url)
        try:
            async with self._session.request(
                method, url, data=body, timeout=timeout, headers=headers, proxy=proxy
            ) as response:
                return response.status, await response.read()
        except TimeoutError as exc:  # aiohttp's own timeouts are TimeoutErrors too
            raise TimedOut(f"Timed out ({_masked(exc, url)})") from None
        except aiohttp.ClientConnectorError as exc:
            raise ConnectFailed(_masked(exc, url), _why(exc, proxy)) from None
        except aiohttp.ClientError as exc:
            raise NetworkError(_masked(exc, url)) from None
