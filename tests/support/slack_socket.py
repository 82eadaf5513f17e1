"""A fake Slack Socket Mode endpoint on 127.0.0.1 for end-to-end tests (never the real Slack).

Socket Mode, as the real slack_sdk client speaks it:

1. The app calls the Web API method `apps.connections.open` with its app-level token
   (`xapp-...`); Slack answers `{"ok": true, "url": "wss://.../link/?ticket=..."}`. FakeSlack
   answers `issue_url()`: a ws:// URL to this server with a ticket that works once.
2. The app opens a WebSocket on that URL. Slack's first message is `{"type": "hello", ...}`.
3. Slack sends envelopes `{"envelope_id", "type", "payload", "accepts_response_payload"}`
   (type "slash_commands", "interactive" or "events_api"); the app acknowledges each with
   `{"envelope_id": ..., "payload"?: ...}` on the same socket (commands and buttons within
   3 seconds).
4. Before Slack drops a connection it sends `{"type": "disconnect", "reason":
   "refresh_requested"}`; the app opens a new one (a new apps.connections.open) and closes
   the old one. Nothing more is routed to a connection that was told to disconnect.

The client's pings get pongs (aiohttp's autoping). The server runs its own event loop in a
background thread, so the test side is thread-safe and serves sync and async tests alike;
an app on the test's event loop needs the `async_` waits (and `ready` before `send`).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import threading
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import WSMsgType, web

from tests.support.slack_wire import (
    DEFAULT_APP_ID,
    block_action_payload,
    event_callback,
    slash_command_fields,
)
from tests.support.waiting import Waitable

T = TypeVar("T")
ACK_DEADLINE = 3.0  # seconds Slack waits for the ack of a command or a button press


@dataclass
class Ack:
    """An acknowledgement from the app: `payload` if it sent one, `seconds` after the
    envelope was sent, on connection number `connection`."""

    envelope_id: str
    payload: dict | None
    seconds: float
    connection: int


@dataclass
class Connection:
    """One WebSocket the app opened (numbered from 1). `closed_by` is "app" or "slack"."""

    number: int
    greeted: bool = False
    draining: bool = False  # told to disconnect: nothing more is routed to it
    closed: bool = False
    close_code: int | None = None
    closed_by: str | None = None
    ws: web.WebSocketResponse | None = field(default=None, repr=False, compare=False)


class FakeSocketMode(Waitable):
    """Slack's Socket Mode side; FakeSlack starts it on first use (`FakeSlack.socket`)."""

    def __init__(self, *, app_id: str = DEFAULT_APP_ID) -> None:
        self.app_id = app_id
        self.url = ""
        self._cond = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._tickets: set[str] = set()
        self._connections: list[Connection] = []
        self._sent: dict[str, float] = {}  # envelope_id: when it was sent
        self._acks: dict[str, Ack] = {}
        self._unexpected: list[str] = []
        self._refused = 0

    # ----- lifecycle -----------------------------------------------------------------------
    def start(self) -> FakeSocketMode:
        """Listen on a free port of 127.0.0.1, on an event loop in a background thread."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(
            target=loop.run_forever, name="fake-slack-socket", daemon=True
        )
        self._thread.start()
        port = self._run(self._serve())
        self.url = f"ws://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        """Close the connections still open (code 1001, going away) and the server."""
        loop, self._loop = self._loop, None
        if loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(5)
        loop.close()

    async def _serve(self) -> int:
        app = web.Application()
        app.router.add_get("/link/", self._accept)
        self._runner = web.AppRunner(app, shutdown_timeout=2.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return int(self._runner.addresses[0][1])

    async def _shutdown(self) -> None:
        with self._cond:
            live = [c for c in self._connections if not c.closed and c.ws is not None]
            for connection in live:
                connection.closed_by = "slack"
        for connection in live:
            assert connection.ws is not None
            await connection.ws.close(code=1001, message=b"fake slack stopped")
        if self._runner is not None:
            await self._runner.cleanup()

    def _run(self, coro: Coroutine[Any, Any, T], seconds: float = 5.0) -> T:
        assert self._loop is not None, "the fake Socket Mode server is not running"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(seconds)

    # ----- Slack's side ----------------------------------------------------------------------
    def issue_url(self) -> str:
        """A fresh WebSocket URL, as apps.connections.open answers (its ticket works once)."""
        ticket = uuid.uuid4().hex
        with self._cond:
            self._tickets.add(ticket)
        return f"{self.url}/link/?ticket={ticket}&app_id={self.app_id}"

    async def _accept(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        with self._cond:
            valid = ticket in self._tickets
            self._tickets.discard(ticket)
            self._refused += not valid
            self._cond.notify_all()
        if not valid:
            return web.Response(status=401, text="invalid or used ticket")
        ws = web.WebSocketResponse(timeout=2.0)  # autoping: the client's pings get pongs
        await ws.prepare(request)
        with self._cond:
            connection = Connection(len(self._connections) + 1, ws=ws)
            self._connections.append(connection)
            live = sum(not c.closed for c in self._connections)
        try:
            await ws.send_json(self._hello(live))
            with self._cond:
                connection.greeted = True
                self._cond.notify_all()
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    self._receive(connection, message.data)
                else:
                    self._note(f"connection {connection.number}: {message.type.name} frame")
        finally:
            with self._cond:
                connection.closed, connection.close_code = True, ws.close_code
                connection.closed_by = connection.closed_by or "app"
                self._cond.notify_all()
        return ws

    def _hello(self, live: int) -> dict:
        debug = {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060}
        return {
            "type": "hello",
            "num_connections": live,
            "debug_info": debug,
            "connection_info": {"app_id": self.app_id},
        }

    def _receive(self, connection: Connection, data: str) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        envelope_id = message.get("envelope_id") if isinstance(message, dict) else None
        with self._cond:
            if not isinstance(envelope_id, str) or envelope_id not in self._sent:
                self._note(f"connection {connection.number}: not an ack of ours: {data[:200]}")
            elif envelope_id in self._acks:
                self._note(f"connection {connection.number}: {envelope_id} acknowledged twice")
            else:
                assert isinstance(message, dict)
                seconds = time.monotonic() - self._sent[envelope_id]
                payload = message.get("payload")
                self._acks[envelope_id] = Ack(envelope_id, payload, seconds, connection.number)
            self._cond.notify_all()

    def _note(self, problem: str) -> None:
        with self._cond:
            self._unexpected.append(problem)
            self._cond.notify_all()

    # ----- test side: sending -----------------------------------------------------------------
    def send(
        self,
        envelope_type: str,
        payload: dict,
        *,
        accepts_response_payload: bool | None = None,
        seconds: float = 5.0,
    ) -> str:
        """Send an envelope on the newest live connection (waiting up to `seconds` for one)
        and return its envelope_id. Slash commands accept a response payload by default."""
        envelope_id = str(uuid.uuid4())
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "payload": payload,
            "type": envelope_type,
            "accepts_response_payload": envelope_type == "slash_commands"
            if accepts_response_payload is None
            else accepts_response_payload,
        }
        if envelope_type == "events_api":
            envelope |= {"retry_attempt": 0, "retry_reason": ""}
        connection = self._live(seconds)
        with self._cond:
            self._sent[envelope_id] = time.monotonic()
        self._run(connection.ws.send_json(envelope))  # type: ignore[union-attr]
        return envelope_id

    def send_slash_command(self, text: str, **fields: Any) -> str:
        """`/paperwatch text` (other fields, e.g. user_id, channel_id, team_id: those of
        `slash_command_fields`); returns the envelope_id."""
        return self.send("slash_commands", slash_command_fields(text=text, **fields))

    def send_block_action(self, action_id: str, value: str | None, **fields: Any) -> str:
        """A button press (other fields: `block_action_payload`'s); returns the envelope_id."""
        return self.send("interactive", block_action_payload(action_id, value, **fields))

    def send_event(self, event: dict, **fields: Any) -> str:
        """An Events API event (other fields: `event_callback`'s); returns the envelope_id."""
        return self.send("events_api", event_callback(event, **fields))

    def disconnect(self, reason: str = "refresh_requested", *, seconds: float = 5.0) -> int:
        """Ask the app to move to a new connection; returns the number of the one told."""
        connection = self._live(seconds)
        with self._cond:
            connection.draining = True
        message = {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}}
        self._run(connection.ws.send_json(message))  # type: ignore[union-attr]
        return connection.number

    def _newest(self) -> Connection | None:
        live = [c for c in self._connections if c.greeted and not c.draining and not c.closed]
        return live[-1] if live else None

    def _live(self, seconds: float) -> Connection:
        with self._cond:
            if not self._cond.wait_for(lambda: self._newest() is not None, seconds):
                raise TimeoutError(f"no live Socket Mode connection within {seconds}s")
            connection = self._newest()
            assert connection is not None and connection.ws is not None
            return connection

    # ----- test side: what happened -------------------------------------------------------------
    @property
    def ready(self) -> bool:
        """Whether a connection is open, greeted and not told to disconnect (`send` works)."""
        with self._cond:
            return self._newest() is not None

    @property
    def connections(self) -> list[Connection]:
        """Every connection the app opened, in order (copies, without the socket)."""
        with self._cond:
            return [dataclasses.replace(c, ws=None) for c in self._connections]

    @property
    def acks(self) -> dict[str, Ack]:
        """The acknowledgements received, by envelope_id."""
        with self._cond:
            return copy.deepcopy(self._acks)

    @property
    def unexpected(self) -> list[str]:
        """What the app sent that is not a first ack of an envelope sent, or not text."""
        with self._cond:
            return list(self._unexpected)

    @property
    def refused(self) -> int:
        """Connection attempts without a valid ticket (never issued, or already used)."""
        with self._cond:
            return self._refused

    def wait_for_ack(self, envelope_id: str, seconds: float = ACK_DEADLINE) -> Ack:
        """Block until the envelope is acknowledged (by default within Slack's 3 seconds)."""
        self.wait_until(lambda s: envelope_id in s._acks, seconds)
        return self.acks[envelope_id]

    async def async_wait_for_ack(self, envelope_id: str, seconds: float = ACK_DEADLINE) -> Ack:
        """Await the envelope's acknowledgement (by default within Slack's 3 seconds)."""
        await self.async_wait_until(lambda s: envelope_id in s._acks, seconds)
        return self.acks[envelope_id]

    def _seen(self) -> str:
        connections = [(c.number, c.greeted, c.draining, c.closed) for c in self._connections]
        return (
            f"connections (number, greeted, draining, closed): {connections}; "
            f"acks: {len(self._acks)} of {len(self._sent)}; unexpected: {self._unexpected}"
        )
