"""A fake Slack Web API on 127.0.0.1 for end-to-end tests (never the real Slack).

The real slack_sdk clients talk to it through `base_url`::

    with serve_fake_slack() as slack:             # or FakeSlack().start() ... .stop()
        client = WebClient(token=slack.bot_token, base_url=slack.api_url)
        client.chat_postMessage(channel="C0PAPERS", text="hi", blocks=[...])
        assert slack.messages_for("C0PAPERS")[0].text == "hi"

It answers `{"ok": true, ...}` or Slack-shaped errors (`{"ok": false, "error": ...}` with
HTTP 200; 429 + `Retry-After` for rate limits; 404 `unknown_method`), rejects what Slack
rejects (Block Kit limits and strict mrkdwn escaping: `slack_blocks`), and records every
call. It also serves `response_url` POSTs (`/response/<id>`) and file upload URLs
(`/upload/<file_id>`). Requests the app's own endpoint receives from Slack (signed slash
commands, block actions, events) are built by `slack_wire`, re-exported here. The test
side is thread-safe, so it serves sync and async tests alike.

Socket Mode: `apps.connections.open` takes only the app-level token (`app_token`) and
answers a WebSocket URL of `socket`, a `FakeSocketMode` (`slack_socket`) started on first
use, through which the test sends slash commands, button presses and events.
"""

from __future__ import annotations

import copy
import itertools
import math
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.support.slack_methods import (
    APP_TOKEN_METHODS,
    METHODS,
    Posted,
    PublishedView,
    ResponsePost,
    SlackError,
    UploadedFile,
    WebApiMethods,
)
from tests.support.slack_socket import Ack, Connection, FakeSocketMode
from tests.support.slack_wire import (
    DEFAULT_APP_ID,
    DEFAULT_APP_TOKEN,
    DEFAULT_BOT_ID,
    DEFAULT_BOT_TOKEN,
    DEFAULT_BOT_USER_ID,
    DEFAULT_TEAM_ID,
    Reply,
    SlackWireServer,
    app_home_opened_event,
    block_action_body,
    event_body,
    signed_request_headers,
    slash_command_body,
    view_submission_body,
)
from tests.support.waiting import Waitable

__all__ = [
    "Ack",
    "Connection",
    "FakeSlack",
    "FakeSocketMode",
    "Posted",
    "PublishedView",
    "Rejected",
    "ResponsePost",
    "SlackError",
    "UploadedFile",
    "app_home_opened_event",
    "block_action_body",
    "event_body",
    "serve_fake_slack",
    "signed_request_headers",
    "slash_command_body",
    "view_submission_body",
]


@dataclass
class Rejected:
    """A call answered with an error, and why (`errors`: Slack's details, if any).
    `method` is the API method, or "response_url" / "upload" for those URLs."""

    method: str
    status: int
    error: str
    errors: list[str]
    params: dict
    time: float

    @property
    def reason(self) -> str:
        """The error and its details on one line."""
        return "; ".join([self.error, *self.errors])


@dataclass
class _Fault:
    method: str
    error: str
    status: int
    retry_after: int | None
    channel: str | None
    times: int | None


class FakeSlack(WebApiMethods, Waitable):
    """State and behaviour of the fake Slack Web API; start it with `serve_fake_slack()`."""

    def __init__(
        self,
        *,
        bot_token: str = DEFAULT_BOT_TOKEN,
        team_id: str = DEFAULT_TEAM_ID,
        bot_user_id: str = DEFAULT_BOT_USER_ID,
        bot_id: str = DEFAULT_BOT_ID,
        strict_mrkdwn: bool = True,
        app_token: str = DEFAULT_APP_TOKEN,
        app_id: str = DEFAULT_APP_ID,
    ) -> None:
        self.bot_token, self.team_id = bot_token, team_id
        self.app_token, self.app_id = app_token, app_id
        self.bot_user_id, self.bot_id = bot_user_id, bot_id
        self.strict_mrkdwn = strict_mrkdwn
        self.require_known_channels = False  # True: only add_channel() channels exist
        self.url = ""
        self._cond = threading.Condition()
        self._server: SlackWireServer | None = None
        self._socket: FakeSocketMode | None = None
        self._ids = itertools.count(1)
        self._channels: dict[str, dict] = {}
        self._users: dict[str, dict] = {}
        self._admins: set[str] = set()
        self._owners: set[str] = set()
        self._messages: dict[tuple[str, str], dict] = {}
        self._home: dict[str, PublishedView] = {}
        self._files: dict[str, UploadedFile] = {}
        self._shared: dict[str, bytes] = {}  # files people shared (`share_file`), by id
        self.downloads: list[str] = []  # ids of shared files the app fetched
        self._response_uses: dict[str, int] = {}
        self._faults: list[_Fault] = []
        self._limit: tuple[float, float, int, tuple[str, ...]] | None = None
        self._post_times: dict[tuple[str, str], deque[float]] = {}
        self._posted: list[Posted] = []
        self._views: list[PublishedView] = []
        self._modals: list[dict] = []
        self._responses: list[ResponsePost] = []
        self._rejected: list[Rejected] = []
        self._calls: list[str] = []
        self._too_many = 0

    # ----- lifecycle -----------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        """What to pass as slack_sdk's `base_url` (it appends the method name)."""
        return f"{self.url}/api/"

    def start(self) -> FakeSlack:
        """Listen on a free port of 127.0.0.1 in a background thread."""
        server = SlackWireServer(self.dispatch)
        self._server, self.url = server, f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Close the server (and the Socket Mode endpoint, if it was started)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        with self._cond:
            socket, self._socket = self._socket, None
        if socket is not None:
            socket.stop()

    @property
    def socket(self) -> FakeSocketMode:
        """The Socket Mode endpoint (started on first use, stopped with the fake)."""
        with self._cond:
            if self._socket is None:
                self._socket = FakeSocketMode(app_id=self.app_id).start()
            return self._socket

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- test side: the workspace -----------------------------------------------------------
    def add_channel(
        self,
        channel_id: str,
        name: str | None = None,
        *,
        is_private: bool = False,
        is_archived: bool = False,
        is_member: bool = True,
    ) -> None:
        """Declare a channel; archived ones answer is_archived, non-member ones not_in_channel."""
        with self._cond:
            self._channels[channel_id] = self.channel_record(channel_id, name or channel_id.lower())
            self._channels[channel_id] |= {
                "is_private": is_private,
                "is_archived": is_archived,
                "is_member": is_member,
            }

    def set_admins(self, user_ids: Iterable[str], *, owners: Iterable[str] = ()) -> None:
        """Who users.info reports as workspace admins (is_admin) and owners (is_owner too)."""
        with self._cond:
            self._owners = set(owners)
            self._admins = set(user_ids) | self._owners

    def add_user(self, user_id: str, name: str | None = None, **fields: Any) -> None:
        """Declare a user (any users.info field may be overridden, e.g. deleted=True)."""
        with self._cond:
            self._users[user_id] = {"name": name or user_id.lower()} | fields

    def response_url(self) -> str:
        """A fresh response_url served by this fake (for slash_command_body & co)."""
        with self._cond:
            return f"{self.url}/response/{next(self._ids)}"

    # ----- test side: faults and limits -------------------------------------------------------
    def fail_next(
        self,
        method: str,
        error: str,
        *,
        status: int | None = None,
        retry_after: int | None = None,
        channel: str | None = None,
        times: int | None = 1,
    ) -> None:
        """Answer the next `times` calls of `method` ("*" = any; None = forever), optionally
        only for `channel`, with `error`. Status defaults to 429 for "ratelimited" (with
        Retry-After: retry_after or 1), else 200 like Slack."""
        status = status if status is not None else 429 if error == "ratelimited" else 200
        if status == 429 and retry_after is None:
            retry_after = 1
        with self._cond:
            self._faults.append(_Fault(method, error, status, retry_after, channel, times))

    def rate_limit(
        self,
        per_channel_per_second: float = 1.0,
        *,
        methods: tuple[str, ...] = ("chat.postMessage",),
        enabled: bool = True,
    ) -> None:
        """Answer 429 `ratelimited` + Retry-After to `methods` over the per-channel rate.
        The window is max(1 s, 1/rate) and holds max(1, round(rate * window)) calls."""
        window = max(1.0, 1.0 / per_channel_per_second)
        with self._cond:
            capacity = max(1, round(per_channel_per_second * window))
            self._limit = (per_channel_per_second, window, capacity, methods) if enabled else None

    # ----- test side: what happened -----------------------------------------------------------
    @property
    def posted(self) -> list[Posted]:
        """Every accepted chat.postMessage / chat.postEphemeral / chat.update, in order."""
        with self._cond:
            return copy.deepcopy(self._posted)

    @property
    def views(self) -> list[PublishedView]:
        """Every accepted views.publish, in order."""
        with self._cond:
            return copy.deepcopy(self._views)

    @property
    def modals(self) -> list[dict]:
        """Every accepted views.open, in order: {"trigger_id", "view"} (the view as opened)."""
        with self._cond:
            return copy.deepcopy(self._modals)

    @property
    def responses(self) -> list[ResponsePost]:
        """Every accepted POST to a response_url, in order."""
        with self._cond:
            return copy.deepcopy(self._responses)

    @property
    def rejected(self) -> list[Rejected]:
        """Every call answered with an error (validation, auth, faults, limits, 404s)."""
        with self._cond:
            return copy.deepcopy(self._rejected)

    @property
    def calls(self) -> list[str]:
        """The Web API method names called, in order (also unknown ones)."""
        with self._cond:
            return list(self._calls)

    @property
    def uploads(self) -> list[UploadedFile]:
        """Files announced with files.getUploadURLExternal, with content once uploaded."""
        with self._cond:
            return copy.deepcopy(list(self._files.values()))

    @property
    def too_many_requests(self) -> int:
        """How many calls were answered 429 (rate limit and injected faults)."""
        with self._cond:
            return self._too_many

    def messages_for(self, channel: str) -> list[Posted]:
        """Accepted posts, ephemeral posts and updates to one channel, in order."""
        return [posted for posted in self.posted if posted.channel == channel]

    def message(self, channel: str, ts: str) -> dict | None:
        """A bot message as it is now (after updates), as Slack would return it."""
        with self._cond:
            return copy.deepcopy(self._messages.get((channel, ts)))

    def home_view(self, user_id: str) -> dict | None:
        """The Home tab last published for `user_id`."""
        with self._cond:
            published = self._home.get(user_id)
            return copy.deepcopy(published.view) if published else None

    def share_file(self, name: str, content: bytes, *, size: int | None = None) -> dict:
        """A file a person shares (put it in a `message` event's `files`): Slack's file
        object, whose `url_private_download` serves `content` to the bot token only."""
        with self._cond:
            file_id = f"F0SHARED{len(self._shared):04d}"
            self._shared[file_id] = content
            return {
                "id": file_id,
                "name": name,
                "mimetype": "text/plain",
                "filetype": "text",
                "size": len(content) if size is None else size,
                "url_private": f"{self.url}/download/{file_id}",
                "url_private_download": f"{self.url}/download/{file_id}",
            }

    def _seen(self) -> str:
        return f"calls: {self._calls}"

    # ----- dispatch --------------------------------------------------------------------------
    def dispatch(self, kind: str, name: str, token: str | None, params: dict, raw: bytes) -> Reply:
        """Answer one request: kind "api" (name: the method), "response" or "upload" (name:
        the id in the URL)."""
        with self._cond:
            if kind == "download":  # files.slack.com: the file to a bot token, else a 404
                self.downloads.append(name)
                found = self._shared.get(name) if token == self.bot_token else None
                return Reply(200, found) if found is not None else Reply(404, "file_not_found")
            try:
                if kind != "api":
                    return self._serve_url(kind, name, params, raw)
                self._calls.append(name)
                handler = METHODS.get(name)
                if handler is None:
                    raise SlackError("unknown_method", status=404)
                if token is None:
                    raise SlackError("not_authed")
                if name in APP_TOKEN_METHODS:
                    if token != self.app_token:  # Slack: only app-level tokens (xapp-) here
                        bot = token == self.bot_token
                        raise SlackError("not_allowed_token_type" if bot else "invalid_auth")
                elif token != self.bot_token:
                    raise SlackError("invalid_auth")
                self._apply_faults(name, params)
                self._apply_rate_limit(name, params)
                return Reply(200, {"ok": True, **handler(self, params)})
            except SlackError as error:
                return self._reject(name, params, error)
            except Exception as exc:  # a bug in the fake: answer it rather than drop the line
                return self._reject(
                    name, params, SlackError("fatal_error", [repr(exc)], status=500)
                )
            finally:
                self._cond.notify_all()

    def _serve_url(self, kind: str, name: str, params: dict, raw: bytes) -> Reply:
        reply = (
            self.serve_response(name, params)
            if kind == "response"
            else self.serve_upload(name, raw)
        )
        if reply.status != 200:
            error, _, details = str(reply.body).partition("\n")
            method = "response_url" if kind == "response" else "upload"
            rejected = Rejected(
                method, reply.status, error, details.splitlines(), params, time.monotonic()
            )
            self._rejected.append(rejected)
        return reply

    def _reject(self, method: str, params: dict, error: SlackError) -> Reply:
        now = time.monotonic()
        self._too_many += error.status == 429
        self._rejected.append(
            Rejected(method, error.status, error.error, error.errors, params, now)
        )
        body: dict[str, Any] = {"ok": False, "error": error.error}
        if error.errors:
            body["errors"] = error.errors
            body["response_metadata"] = {"messages": [f"[ERROR] {e}" for e in error.errors]}
        headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else {}
        return Reply(error.status, body, headers)

    def _apply_faults(self, method: str, params: dict) -> None:
        channel = params.get("channel", params.get("channel_id"))
        for fault in self._faults:
            if fault.method in ("*", method) and fault.channel in (None, channel):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                raise SlackError(fault.error, status=fault.status, retry_after=fault.retry_after)

    def _apply_rate_limit(self, method: str, params: dict) -> None:
        if self._limit is None or method not in self._limit[3]:
            return
        _, window, capacity, _ = self._limit
        now = time.monotonic()
        times = self._post_times.setdefault((method, str(params.get("channel"))), deque())
        while times and now - times[0] >= window:
            times.popleft()
        if len(times) >= capacity:
            retry_after = max(1, math.ceil(times[0] + window - now))
            raise SlackError("ratelimited", status=429, retry_after=retry_after)
        times.append(now)


@contextmanager
def serve_fake_slack(**options: Any) -> Iterator[FakeSlack]:
    """Run a FakeSlack (options: FakeSlack's keywords) on 127.0.0.1 for the block."""
    fake = FakeSlack(**options).start()
    try:
        yield fake
    finally:
        fake.stop()
