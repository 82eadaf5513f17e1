"""HTTP both ways for the fake Slack: what slack_sdk sends us, and what Slack sends the app.

Inbound (slack_sdk -> fake): slack_sdk POSTs JSON (`chat.postMessage`, `chat.update`,
`views.publish`, ...) or `application/x-www-form-urlencoded` (`auth.test`,
`files.completeUploadExternal`, anything sent through `api_call(data=...)`); GET methods
such as `conversations.info` carry their parameters in the form body (sync client) or the
query string (aiohttp). In form posts `blocks`, `view`, `attachments` and `files` are JSON
text, decoded here. The token comes as `Authorization: Bearer xoxb-...` (or a `token` field).

Outbound (Slack -> the app's endpoint): `slash_command_body`, `block_action_body` and
`event_body` build the bodies Slack posts, and `signed_request_headers` signs them
(`X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:{ts}:{body}"))`). In Socket Mode the
same content travels as envelope payloads (`slash_command_fields`, `block_action_payload`,
`event_callback`; see `slack_socket`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests.support.wire import read_body

DEFAULT_BOT_TOKEN = "xoxb-0000000000-paperwatch-fake"
DEFAULT_APP_TOKEN = "xapp-1-A0PAPERW1-0000000000-paperwatch-fake"  # Socket Mode
DEFAULT_TEAM_ID = "T0PAPERW1"
DEFAULT_TEAM_DOMAIN = "paperwatch-test"
DEFAULT_BOT_USER_ID = "U0PWBOT01"
DEFAULT_BOT_ID = "B0PWBOT01"
DEFAULT_APP_ID = "A0PAPERW1"
DEFAULT_USER_ID = "U0ALICE01"
DEFAULT_CHANNEL_ID = "C0PAPERS1"
DEFAULT_RESPONSE_URL = "https://hooks.slack.com/commands/T0PAPERW1/1/fake"
VERIFICATION_TOKEN = "fake-verification-token"  # Slack's deprecated `token` field

JSON_FIELDS = ("blocks", "attachments", "view", "files", "metadata")
_ROUTE = re.compile(r"/(api|response|upload|download)/([^/]+)")


@dataclass
class Reply:
    """One HTTP answer: a dict is sent as JSON, a str as text/plain, bytes as a file."""

    status: int
    body: dict | str | bytes
    headers: dict[str, str] = field(default_factory=dict)


Dispatch = Callable[[str, str, str | None, dict, bytes], Reply]


class SlackWireServer(ThreadingHTTPServer):
    """A threading HTTP server on a free port of 127.0.0.1 handing each request to `dispatch`
    as (kind "api"/"response"/"upload", method or id, token, params, raw body)."""

    daemon_threads = True

    def __init__(self, dispatch: Dispatch) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.dispatch = dispatch

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up; report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def decode_params(query: str, content_type: str, body: bytes) -> dict[str, Any]:
    """Query string + JSON or form body; JSON-text fields of form posts decoded."""
    params: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    if content_type.startswith("application/json") and body:
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = None
        params |= decoded if isinstance(decoded, dict) else {}
    elif content_type.startswith("application/x-www-form-urlencoded"):
        params |= dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    for name in JSON_FIELDS:
        if isinstance(params.get(name), str):
            with contextlib.suppress(ValueError):  # bad JSON stays text, for the method to refuse
                params[name] = json.loads(params[name])
    return params


def bearer_token(authorization: str | None, params: dict) -> str | None:
    """The token of `Authorization: Bearer ...` (or a `token` field); "" for other schemes."""
    if authorization:
        scheme, _, token = authorization.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else ""
    token = params.pop("token", None)
    return token if isinstance(token, str) else None


class _Handler(BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1 (aiohttp reuses connections); every answer has a Content-Length."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: SlackWireServer

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        raw = read_body(self)
        params = decode_params(parts.query, self.headers.get("Content-Type", ""), raw)
        token = bearer_token(self.headers.get("Authorization"), params)
        route = _ROUTE.fullmatch(parts.path)
        kind, name = (route[1], route[2]) if route else ("api", parts.path)
        reply = self.server.dispatch(kind, name, token, params, raw)
        if isinstance(reply.body, dict):
            data, content_type = json.dumps(reply.body).encode(), "application/json; charset=utf-8"
        elif isinstance(reply.body, bytes):
            data, content_type = reply.body, "application/octet-stream"
        else:
            data, content_type = reply.body.encode(), "text/plain; charset=utf-8"
        self.send_response(reply.status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for header, value in reply.headers.items():
            self.send_header(header, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _handle

    def log_message(self, format: str, *args: object) -> None:
        pass


# ----- what Slack sends the app -------------------------------------------------------------
def signed_request_headers(
    body: bytes, signing_secret: str, timestamp: int | None = None
) -> dict[str, str]:
    """Slack's signature headers for `body` (timestamp: now), plus its Content-Type
    (JSON when the body starts with "{", else form-encoded)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    base = b"v0:" + stamp.encode() + b":" + body
    digest = hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    is_json = body.lstrip().startswith(b"{")
    return {
        "Content-Type": "application/json" if is_json else "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }


def _trigger_id() -> str:
    return f"{int(time.time())}.{DEFAULT_TEAM_ID}.fake{time.monotonic_ns() % 10**9}"


def slash_command_fields(
    command: str = "/paperwatch",
    text: str = "",
    user_id: str = DEFAULT_USER_ID,
    channel_id: str = DEFAULT_CHANNEL_ID,
    team_id: str = DEFAULT_TEAM_ID,
    response_url: str = DEFAULT_RESPONSE_URL,
    *,
    user_name: str = "alice",
    channel_name: str = "papers",
    api_app_id: str = DEFAULT_APP_ID,
) -> dict[str, str]:
    """A slash command invocation: Slack's fields, in its order, every value a string (the
    HTTP form, and the `payload` of a Socket Mode `slash_commands` envelope)."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "team_domain": DEFAULT_TEAM_DOMAIN,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": api_app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": _trigger_id(),
    }


def slash_command_body(*args: Any, **kwargs: Any) -> bytes:
    """A slash command invocation, form-encoded (arguments: `slash_command_fields`)."""
    return urlencode(slash_command_fields(*args, **kwargs)).encode()


def block_action_payload(
    action_id: str,
    value: str | None = None,
    user_id: str = DEFAULT_USER_ID,
    channel_id: str | None = DEFAULT_CHANNEL_ID,
    message_ts: str = "1700000000.000100",
    team_id: str = DEFAULT_TEAM_ID,
    *,
    block_id: str = "actions",
    response_url: str = DEFAULT_RESPONSE_URL,
    message: dict | None = None,
    view: dict | None = None,
    button_text: str = "Button",
    api_app_id: str = DEFAULT_APP_ID,
) -> dict[str, Any]:
    """A button press: the `block_actions` payload. With channel_id=None the button is on the
    Home tab (`view`), else on a message."""
    action: dict[str, Any] = {
        "action_id": action_id,
        "block_id": block_id,
        "text": {"type": "plain_text", "text": button_text, "emoji": True},
        "type": "button",
        "action_ts": f"{time.time():.6f}",
    }
    if value is not None:
        action["value"] = value
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": user_id, "username": "alice", "name": "alice", "team_id": team_id},
        "api_app_id": api_app_id,
        "token": VERIFICATION_TOKEN,
        "trigger_id": _trigger_id(),
        "team": {"id": team_id, "domain": DEFAULT_TEAM_DOMAIN},
        "enterprise": None,
        "is_enterprise_install": False,
        "state": {"values": {}},
        "actions": [action],
    }
    if channel_id is None:
        view = view or {"id": "V0HOME001", "type": "home", "blocks": [], "team_id": team_id}
        payload |= {"container": {"type": "view", "view_id": view.get("id")}, "view": view}
    else:
        default = {"type": "message", "user": DEFAULT_BOT_USER_ID, "bot_id": DEFAULT_BOT_ID}
        payload |= {
            "container": {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel_id,
                "is_ephemeral": False,
            },
            "channel": {"id": channel_id, "name": "papers"},
            "message": message or default | {"ts": message_ts, "text": "", "blocks": []},
            "response_url": response_url,
        }
    return payload


def block_action_body(*args: Any, **kwargs: Any) -> bytes:
    """A button press, form-encoded as `payload=<JSON>` like Slack (arguments:
    `block_action_payload`)."""
    return urlencode({"payload": json.dumps(block_action_payload(*args, **kwargs))}).encode()


def view_submission_body(
    view: dict,
    values: dict[str, dict[str, dict]],
    user_id: str = DEFAULT_USER_ID,
    team_id: str = DEFAULT_TEAM_ID,
) -> bytes:
    """A submitted modal: the `view_submission` payload, with the view as opened (its
    private_metadata untouched) and `values` as its state (block_id -> action_id -> value
    object, e.g. {"question": {"text": {"type": "plain_text_input", "value": "..."}}})."""
    payload = {
        "type": "view_submission",
        "team": {"id": team_id, "domain": DEFAULT_TEAM_DOMAIN},
        "user": {"id": user_id, "username": "alice", "name": "alice", "team_id": team_id},
        "api_app_id": DEFAULT_APP_ID,
        "token": VERIFICATION_TOKEN,
        "trigger_id": _trigger_id(),
        "view": view | {"state": {"values": values}},
        "response_urls": [],
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


def app_home_opened_event(user_id: str = DEFAULT_USER_ID, *, tab: str = "home") -> dict:
    """The `event` of an app_home_opened (pass it to `event_body`)."""
    return {
        "type": "app_home_opened",
        "user": user_id,
        "channel": "D0HOME001",
        "tab": tab,
        "event_ts": f"{time.time():.6f}",
    }


def event_callback(
    event: dict,
    team_id: str = DEFAULT_TEAM_ID,
    event_id: str | None = None,
    *,
    api_app_id: str = DEFAULT_APP_ID,
    bot_user_id: str = DEFAULT_BOT_USER_ID,
) -> dict[str, Any]:
    """An Events API `event_callback` envelope around `event`."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "api_app_id": api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{time.monotonic_ns() % 10**12:012d}",
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
    }


def event_body(*args: Any, **kwargs: Any) -> bytes:
    """An Events API `event_callback` envelope as JSON (arguments: `event_callback`)."""
    return json.dumps(event_callback(*args, **kwargs)).encode()
