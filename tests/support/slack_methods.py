"""The Slack Web API methods the fake implements, plus response_url and upload URLs.

`WebApiMethods` is mixed into `FakeSlack` (which owns the state and holds the lock while a
method runs). Each method takes the decoded parameters and returns the fields of the
`{"ok": true, ...}` answer, or raises `SlackError` for `{"ok": false, "error": ...}`.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.support.slack_blocks import check_message, check_modal, check_view
from tests.support.slack_wire import DEFAULT_TEAM_DOMAIN, Reply

if TYPE_CHECKING:
    from tests.support.slack_socket import FakeSocketMode

RESPONSE_URL_USES = 5  # Slack accepts up to five posts to one response_url
_CHANNEL = re.compile(r"[CGD][A-Z0-9]{2,}|#?[a-z0-9][a-z0-9_-]{0,79}")
_USER = re.compile(r"[UW][A-Z0-9]{2,}")


class SlackError(Exception):
    """Answer `{"ok": false, "error": error, "errors": errors}` with HTTP `status`."""

    def __init__(
        self,
        error: str,
        errors: list[str] | None = None,
        *,
        status: int = 200,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(error)
        self.error, self.errors, self.status = error, errors or [], status
        self.retry_after = retry_after


@dataclass
class Posted:
    """An accepted chat.postMessage / chat.postEphemeral / chat.update (`time`: monotonic)."""

    method: str
    channel: str
    text: str | None
    blocks: list | None
    ts: str
    thread_ts: str | None = None
    user: str | None = None  # the recipient of an ephemeral message
    time: float = 0.0
    params: dict = field(default_factory=dict)


@dataclass
class PublishedView:
    """An accepted views.publish: the Home tab of `user_id`."""

    user_id: str
    view: dict
    hash: str
    time: float


@dataclass
class ResponsePost:
    """An accepted POST to a response_url (`payload`: text, blocks, response_type, ...)."""

    response_id: str
    payload: dict
    time: float


@dataclass
class UploadedFile:
    """A file announced by files.getUploadURLExternal; content once POSTed to its URL."""

    file_id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str | None = None
    channel: str | None = None
    initial_comment: str | None = None
    thread_ts: str | None = None
    completed: bool = False


def _required(params: dict, name: str, error: str = "invalid_arguments") -> Any:
    value = params.get(name)
    if value in (None, ""):
        raise SlackError(error, [f"missing required field: {name}"])
    return value


class WebApiMethods:
    """Method implementations over FakeSlack's state (see slack_server.FakeSlack)."""

    url: str
    team_id: str
    bot_user_id: str
    bot_id: str
    strict_mrkdwn: bool
    require_known_channels: bool
    _ids: itertools.count
    _channels: dict[str, dict]
    _users: dict[str, dict]
    _admins: set[str]
    _owners: set[str]
    _messages: dict[tuple[str, str], dict]
    _home: dict[str, PublishedView]
    _files: dict[str, UploadedFile]
    _response_uses: dict[str, int]
    _posted: list[Posted]
    _views: list[PublishedView]
    _modals: list[dict]
    _responses: list[ResponsePost]
    socket: FakeSocketMode

    # ----- helpers ---------------------------------------------------------------------------
    def new_ts(self) -> str:
        """A message timestamp, unique and increasing."""
        return f"{int(time.time())}.{next(self._ids):06d}"

    def new_id(self, prefix: str) -> str:
        """A Slack-looking id such as F0000007."""
        return f"{prefix}{next(self._ids):07d}"

    def _channel_info(self, channel: object) -> dict:
        """The channel record, or channel_not_found; unknown well-formed ids exist unless
        require_known_channels is set."""
        if not isinstance(channel, str) or not channel:
            raise SlackError("channel_not_found")
        if channel in self._channels:
            return self._channels[channel]
        if self.require_known_channels or not _CHANNEL.fullmatch(channel):
            raise SlackError("channel_not_found")
        return self.channel_record(channel, channel.lower())

    def channel_record(self, channel_id: str, name: str) -> dict:
        """What conversations.info answers for a channel nobody customised."""
        return {
            "id": channel_id,
            "name": name.lstrip("#"),
            "is_channel": channel_id.startswith("C"),
            "is_group": channel_id.startswith("G"),
            "is_im": channel_id.startswith("D"),
            "is_private": channel_id.startswith(("G", "D")),
            "is_archived": False,
            "is_member": True,
            "created": 1_700_000_000,
            "context_team_id": self.team_id,
        }

    def _postable(self, channel: object) -> str:
        """Check a message target: a channel (archived/member rules) or a user id (a DM)."""
        if isinstance(channel, str) and _USER.fullmatch(channel):
            return channel
        info = self._channel_info(channel)
        if info["is_archived"]:
            raise SlackError("is_archived")
        if not info["is_member"]:
            raise SlackError("not_in_channel")
        return str(channel)

    def _check_content(self, params: dict, *, require: bool = True) -> None:
        text, blocks = params.get("text"), params.get("blocks")
        if require and not text and not blocks and not params.get("attachments"):
            raise SlackError("no_text")
        if blocks is not None and not isinstance(blocks, list):
            raise SlackError("invalid_blocks_format", ["blocks must be a JSON array"])
        mrkdwn = params.get("mrkdwn", True) not in (False, "0", "false")
        problem = check_message(text, blocks, mrkdwn=mrkdwn, strict_mrkdwn=self.strict_mrkdwn)
        if problem is not None:
            raise SlackError(*problem)

    def _record(self, method: str, channel: str, ts: str, params: dict, **extra: Any) -> None:
        text, blocks = params.get("text"), params.get("blocks")
        thread_ts, now = params.get("thread_ts"), time.monotonic()
        posted = Posted(method, channel, text, blocks, ts, thread_ts, time=now, params=params)
        for name, value in extra.items():
            setattr(posted, name, value)
        self._posted.append(posted)

    def _bot_message(self, params: dict, ts: str) -> dict:
        message = {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id}
        message |= {"text": params.get("text") or "", "ts": ts, "team": self.team_id}
        if params.get("blocks") is not None:
            message["blocks"] = params["blocks"]
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        return message

    # ----- Web API methods ---------------------------------------------------------------------
    def auth_test(self, params: dict) -> dict:
        """The bot's identity."""
        return {
            "url": f"https://{DEFAULT_TEAM_DOMAIN}.slack.com/",
            "team": "Paperwatch Test",
            "user": "paperwatch",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def chat_post_message(self, params: dict) -> dict:
        """Post to a channel (or a user id: the bot's DM with them)."""
        channel = self._postable(params.get("channel"))
        self._check_content(params)
        ts = self.new_ts()
        self._messages[(channel, ts)] = message = self._bot_message(params, ts)
        self._record("chat.postMessage", channel, ts, params)
        return {"channel": channel, "ts": ts, "message": message}

    def chat_post_ephemeral(self, params: dict) -> dict:
        """Post a message only `user` sees (it cannot be updated later)."""
        channel = self._postable(params.get("channel"))
        user = _required(params, "user", "user_not_found")
        self._check_content(params)
        ts = self.new_ts()
        self._record("chat.postEphemeral", channel, ts, params, user=user)
        return {"message_ts": ts}

    def chat_update(self, params: dict) -> dict:
        """Replace a bot message's text; its blocks too when `blocks` is given."""
        channel = self._postable(params.get("channel"))
        ts = _required(params, "ts", "message_not_found")
        message = self._messages.get((channel, ts))
        if message is None:
            raise SlackError("message_not_found")
        self._check_content(params, require=False)
        if params.get("text") is not None:
            message["text"] = params["text"]
        if params.get("blocks") is not None:
            message["blocks"] = params["blocks"]
        merged = params | {"text": message["text"], "blocks": message.get("blocks")}
        self._record("chat.update", channel, ts, merged)
        return {"channel": channel, "ts": ts, "text": message["text"], "message": message}

    def views_publish(self, params: dict) -> dict:
        """Publish a user's Home tab (hash: optimistic locking like Slack's)."""
        user_id = _required(params, "user_id", "invalid_arguments")
        if not _USER.fullmatch(str(user_id)):
            raise SlackError("user_not_found")
        view = params.get("view")
        problem = check_view(view, strict_mrkdwn=self.strict_mrkdwn)
        if problem is not None:
            raise SlackError(*problem)
        assert isinstance(view, dict)
        current = self._home.get(user_id)
        if params.get("hash") and current is not None and params["hash"] != current.hash:
            raise SlackError("hash_conflict")
        published = PublishedView(user_id, view, f"{time.time():.6f}", time.monotonic())
        self._home[user_id] = published
        self._views.append(published)
        answer = {"id": current.view.get("id") if current else self.new_id("V")}
        answer |= view | {"team_id": self.team_id, "hash": published.hash}
        published.view = answer
        return {"view": answer}

    def views_open(self, params: dict) -> dict:
        """Open a modal for a trigger_id (an interaction's, valid once)."""
        trigger = _required(params, "trigger_id", "invalid_arguments")
        if not isinstance(trigger, str) or trigger.count(".") < 2:
            raise SlackError("invalid_trigger_id")
        if any(m["trigger_id"] == trigger for m in self._modals):
            raise SlackError("expired_trigger_id")
        view = params.get("view")
        problem = check_modal(view, strict_mrkdwn=self.strict_mrkdwn)
        if problem is not None:
            raise SlackError(*problem)
        assert isinstance(view, dict)
        opened = view | {"id": self.new_id("V"), "team_id": self.team_id, "state": {"values": {}}}
        self._modals.append({"trigger_id": trigger, "view": opened})
        return {"view": opened}

    def conversations_info(self, params: dict) -> dict:
        """A channel's record (add_channel() customises it)."""
        return {"channel": dict(self._channel_info(params.get("channel")))}

    def users_info(self, params: dict) -> dict:
        """A user's record; set_admins() decides is_admin / is_owner."""
        user_id = params.get("user")
        if not isinstance(user_id, str) or not _USER.fullmatch(user_id):
            raise SlackError("user_not_found")
        extra = self._users.get(user_id, {})
        name = extra.get("name", user_id.lower())
        user = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name,
            "real_name": name.title(),
            "deleted": False,
            "is_admin": user_id in self._admins,
            "is_owner": user_id in self._owners,
            "is_primary_owner": False,
            "is_bot": user_id == self.bot_user_id,
            "is_app_user": False,
            "tz": "UTC",
            "profile": {"display_name": name, "real_name": name.title()},
        }
        return {"user": user | extra}

    def files_get_upload_url_external(self, params: dict) -> dict:
        """Announce an upload: answers a file id and an upload URL served by this fake."""
        filename = _required(params, "filename")
        length = str(_required(params, "length"))
        if not length.isdigit() or int(length) <= 0:
            raise SlackError("invalid_arguments", ["length must be a positive integer"])
        file_id = self.new_id("F")
        self._files[file_id] = UploadedFile(file_id, filename, int(length))
        return {"upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}

    def files_complete_upload_external(self, params: dict) -> dict:
        """Finish uploads (and share them to channel_id, with initial_comment)."""
        files = params.get("files")
        if not isinstance(files, list) or not files:
            raise SlackError("invalid_arguments", ["files must be a non-empty JSON array"])
        channel = params.get("channel_id") or params.get("channels")
        if channel:
            channel = self._postable(channel)
        answers = []
        for item in files:
            upload = self._files.get(item.get("id") if isinstance(item, dict) else None)
            if upload is None or upload.content is None:
                raise SlackError("file_not_found")
            upload.title = item.get("title") or upload.filename
            upload.channel, upload.completed = channel, True
            upload.initial_comment = params.get("initial_comment")
            upload.thread_ts = params.get("thread_ts")
            answers.append(
                {"id": upload.file_id, "name": upload.filename, "title": upload.title}
                | {"size": len(upload.content), "channels": [channel] if channel else []}
            )
        return {"files": answers}

    # ----- other URLs ------------------------------------------------------------------------
    def serve_upload(self, file_id: str, raw: bytes) -> Reply:
        """The upload URL: store the bytes (answer like files.slack.com: "OK - <size>")."""
        upload = self._files.get(file_id)
        if upload is None:
            return Reply(404, "file_not_found")
        upload.content = raw
        return Reply(200, f"OK - {len(raw)}")

    def serve_response(self, response_id: str, params: dict) -> Reply:
        """A response_url: validated like a message; answers like an incoming webhook
        (200 "ok", else 400/404 with the error as text). Five posts per URL at most."""
        uses = self._response_uses.get(response_id, 0)
        if uses >= RESPONSE_URL_USES:
            return Reply(404, "used_url")
        if (
            not params.get("text")
            and not params.get("blocks")
            and not params.get("delete_original")
        ):
            return Reply(400, "no_text")
        problem = check_message(
            params.get("text"), params.get("blocks"), strict_mrkdwn=self.strict_mrkdwn
        )
        if problem is not None:
            return Reply(400, problem[0] + "\n" + "\n".join(problem[1]))
        self._response_uses[response_id] = uses + 1
        self._responses.append(ResponsePost(response_id, params, time.monotonic()))
        return Reply(200, "ok")

    def apps_connections_open(self, params: dict) -> dict:
        """Socket Mode: a WebSocket URL for one connection (the token is the app's)."""
        return {"url": self.socket.issue_url()}


Handler = Callable[[WebApiMethods, dict], dict]
METHODS: dict[str, Handler] = {
    "auth.test": WebApiMethods.auth_test,
    "chat.postMessage": WebApiMethods.chat_post_message,
    "chat.postEphemeral": WebApiMethods.chat_post_ephemeral,
    "chat.update": WebApiMethods.chat_update,
    "views.publish": WebApiMethods.views_publish,
    "views.open": WebApiMethods.views_open,
    "conversations.info": WebApiMethods.conversations_info,
    "users.info": WebApiMethods.users_info,
    "files.getUploadURLExternal": WebApiMethods.files_get_upload_url_external,
    "files.completeUploadExternal": WebApiMethods.files_complete_upload_external,
    "apps.connections.open": WebApiMethods.apps_connections_open,
}
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})  # app-level tokens only
