"""The operator's endpoint: /healthz, /readyz and /metrics over HTTP (aiohttp).

Off unless PAPERWATCH_OPS_PORT is set; every `paperwatch run` process serves its own,
on PAPERWATCH_OPS_HOST (127.0.0.1 by default). It is an edge, like the chat adapters:
it knows nothing of the scheduler or the database, only the three checks the
composition root (`bot.app`) hands it:

- /healthz (liveness): 200 "ok" while `live()` finds nothing wrong, else 503 and the
  reason. The server runs on the bot's own event loop, so an answer at all says the
  loop is alive; `live` says whether the scheduler is (`bot.liveness.Liveness`).
- /readyz (readiness): 200 "ok" while `ready()` finds nothing wrong (the database
  answers and its schema is at head: `storage.readiness`), else 503 and the reason.
- /metrics: `metrics()`, Prometheus's text format (`bot.metrics`).

The answers are plain text of one line, and say nothing secret.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from bot.config import StartupError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Checks:
    """What the endpoint asks: each check returns None when fine, else the reason."""

    live: Callable[[], str | None]
    ready: Callable[[], Awaitable[str | None]]
    metrics: Callable[[], Awaitable[bytes]]


def _answer(problem: str | None) -> web.Response:
    if problem is None:
        return web.Response(text="ok\n")
    return web.Response(status=503, text=problem + "\n")


def ops_app(checks: Checks) -> web.Application:
    """The three routes (GET, and HEAD with them)."""

    async def healthz(_request: web.Request) -> web.Response:
        return _answer(checks.live())

    async def readyz(_request: web.Request) -> web.Response:
        return _answer(await checks.ready())

    async def metrics(_request: web.Request) -> web.Response:
        response = web.Response(body=await checks.metrics())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app


@contextlib.asynccontextmanager
async def serving(checks: Checks, host: str, port: int) -> AsyncIterator[int]:
    """The endpoint listening on host:port (0: a free port) until the way out; yields
    the port it listens on. A port that cannot be had stops the start in one line."""
    runner = web.AppRunner(ops_app(checks), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        reason = os.strerror(exc.errno) if exc.errno else str(exc)  # "Address already in use"
        raise StartupError(
            f"cannot serve the ops endpoint on {host}:{port} ({reason}); set"
            " PAPERWATCH_OPS_PORT to a free port, or unset it to turn the endpoint off"
        ) from exc
    bound = _bound_port(runner, port)
    log.info("ops endpoint on http://%s:%d (/healthz, /readyz, /metrics)", host, bound)
    try:
        yield bound
    finally:
        await runner.cleanup()


def _bound_port(runner: web.AppRunner, asked: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return asked
