"""One line for a host paperwatch cannot reach: which host, why, and what to check.

arXiv (httpx), Telegram and Slack (aiohttp) fail to connect with different exception
types, but each keeps the operating system's error somewhere in its chain (`__cause__`
or `__context__`): refused, a name that does not resolve, no route. `unreachable` turns
that into the sentence a person can act on, so every caller words it the same way.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

_BY_ERRNO = {
    errno.ECONNREFUSED: "connection refused",
    errno.EHOSTUNREACH: "no route to the host",
    errno.ENETUNREACH: "the network is unreachable",
    errno.ETIMEDOUT: "the connection timed out",
    errno.ECONNRESET: "the connection was reset",
}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def connect_failure(exc: BaseException) -> str:
    """Why a connection could not be made, in a few words ("connection refused")."""
    for link in _chain(exc):
        if isinstance(link, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(link, TimeoutError):
            return "the connection timed out"
        if isinstance(link, OSError) and link.errno in _BY_ERRNO:
            return _BY_ERRNO[link.errno]
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text or type(exc).__name__


def host_of(url: str) -> str:
    """The host (and port, if any) of `url`: what a person looks for in their settings."""
    return urlsplit(url).netloc.rpartition("@")[2] or url


def unreachable(
    service: str, url: str, reason: str, setting: str, proxy: str = "HTTPS_PROXY, NO_PROXY"
) -> str:
    """The one line: "cannot reach Telegram at api.telegram.org (connection refused); ...".

    `setting` is where the URL came from; `proxy`, the variables the client reads for it."""
    return (
        f"cannot reach {service} at {host_of(url)} ({reason}); check the network connection, "
        f"the proxy ({proxy}) and {setting}"
    )


def cannot_listen(service: str, host: str, port: int, exc: OSError, setting: str) -> str:
    """The one line for a server socket paperwatch cannot open: "cannot listen on
    0.0.0.0:8443 for Telegram's webhook (the port is in use by another program); ..."."""
    if exc.errno == errno.EADDRINUSE:
        reason, advice = "the port is in use by another program", "stop that program or set"
    else:
        reason, advice = exc.strerror or str(exc), "set"
    where = f"{host}:{port} for {service}"
    return f"cannot listen on {where} ({reason}); {advice} {setting} to a free port"
