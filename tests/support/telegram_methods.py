"""The Bot API methods of the fake Telegram server (a mixin; `FakeTelegram` owns the state).

Every `api_<lowercased method>` takes the decoded parameters and uploaded files, runs with the
server's lock held, and returns the `result` or raises `ApiError` with Telegram's wording.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tests.support.telegram_html import (
    ParsedHtml,
    check_bot_commands,
    check_message_text,
    check_reply_markup,
)

NOT_DELIVERED_BY_DEFAULT = {"chat_member", "message_reaction", "message_reaction_count"}
CHAT_ACTIONS = {"typing", "upload_photo", "record_video", "upload_video", "record_voice"}
CHAT_ACTIONS |= {"upload_voice", "upload_document", "choose_sticker", "find_location"}
CHAT_ACTIONS |= {"record_video_note", "upload_video_note"}
IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF")
CONFLICT = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance"
    " is running"
)
WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete"
    " the webhook first"
)
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are"
    " exactly the same as a current content and reply markup of the message"
)
_ADMIN_RIGHTS = [
    "can_manage_chat",
    "can_delete_messages",
    "can_manage_video_chats",
    "can_restrict_members",
    "can_change_info",
    "can_invite_users",
    "can_post_stories",
    "can_edit_stories",
    "can_delete_stories",
    "can_pin_messages",
]


class ApiError(Exception):
    """An error answer: HTTP status, description and optional response `parameters`."""

    def __init__(self, status: int, description: str, parameters: dict | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


@dataclass
class Upload:
    """A file the bot uploaded in a multipart request."""

    filename: str
    content_type: str
    data: bytes


@dataclass
class Sent:
    """An accepted sendMessage / sendPhoto / editMessageText.

    `text` is what the bot sent (the caption for photos, HTML tags included); `visible_text`
    is what the user sees.
    """

    method: str
    chat_id: int
    message_id: int
    text: str
    parse_mode: str | None
    reply_markup: dict | None
    disable_web_page_preview: bool | None = None
    link_preview_options: dict | None = None
    time: float = field(default_factory=time.monotonic)
    visible_text: str = ""
    photo: Upload | str | None = None
    params: dict[str, Any] = field(default_factory=dict)


def scope_key(scope: object, language_code: object) -> tuple[str, str]:
    """How setMyCommands lists are keyed: (scope type and ids, language code)."""
    scope = scope if isinstance(scope, dict) else {"type": "default"}
    return repr(sorted(scope.items())), str(language_code or "")


class BotApiMethods:
    """Bot API behaviour over the state that `FakeTelegram.__init__` creates."""

    bot_id: int
    bot_username: str
    strict_html: bool
    require_known_chats: bool
    _cond: threading.Condition
    _closed: bool
    _updates: deque[dict]
    _next_update_id: int
    _allowed: set[str] | None
    _poll_generation: int
    _webhook: str | None
    _chats: dict[int, dict]
    _users: dict[int, dict]
    _messages: dict[tuple[int, int], dict]
    _last_message_id: dict[int, int]
    _pending_callbacks: set[str]
    _admins: dict[int, dict[int, str]]
    _limits: tuple[float, float, int] | None
    _chat_times: dict[int, deque[float]]
    _global_times: deque[float]
    _commands: dict[tuple[str, str], list[dict]]
    _file_ids: set[str]
    _documents: dict[str, bytes]
    _sent: list[Sent]
    _answered: list[dict]

    # ----- state helpers ---------------------------------------------------------------------
    def _queue(self, update: dict) -> dict:
        update.setdefault("update_id", self._next_update_id)
        self._next_update_id = max(self._next_update_id, update["update_id"]) + 1
        self._updates.append(update)
        self._cond.notify_all()
        return copy.deepcopy(update)

    def _new_id(self, chat_id: int) -> int:
        self._last_message_id[chat_id] = self._last_message_id.get(chat_id, 0) + 1
        return self._last_message_id[chat_id]

    def _chat(self, chat_id: int, chat_type: str | None = None) -> dict:
        if chat_id not in self._chats or chat_type:
            kind = chat_type or ("private" if chat_id > 0 else "supergroup")
            chat: dict[str, Any] = {"id": chat_id, "type": kind}
            chat |= {"first_name": f"User{chat_id}"} if kind == "private" else {"title": "Group"}
            self._chats[chat_id] = chat
        return self._chats[chat_id]

    def _user(self, uid: int, username: str | None = None, is_bot: bool = False) -> dict:
        if uid == self.bot_id:
            return self._bot_user()
        new = {"id": uid, "is_bot": is_bot, "first_name": f"User{uid}"}
        user = self._users.setdefault(uid, new)
        user["is_bot"] = is_bot or user["is_bot"]
        if username:
            user["username"] = username
        return dict(user)

    def _bot_user(self) -> dict:
        name = {"first_name": "paperwatch", "username": self.bot_username}
        return {"id": self.bot_id, "is_bot": True} | name

    def _target(self, p: dict) -> dict:
        chat_id = p.get("chat_id")
        if chat_id in (None, ""):
            raise ApiError(400, "Bad Request: chat_id is empty")
        known = isinstance(chat_id, int) and (
            chat_id in self._chats or not self.require_known_chats
        )
        if not known:
            raise ApiError(400, "Bad Request: chat not found")
        return self._chat(chat_id)

    def _content(self, p: dict, key: str, caption: bool = False) -> tuple[ParsedHtml, dict | None]:
        parsed, error = check_message_text(
            p.get(key), p.get("parse_mode"), caption=caption, strict=self.strict_html
        )
        error = error or check_reply_markup(p.get("reply_markup"))
        if error:
            raise ApiError(400, error)
        markup = p.get("reply_markup")
        inline = isinstance(markup, dict) and "inline_keyboard" in markup
        return parsed, copy.deepcopy(markup) if inline else None

    def _check_rate(self, chat_id: int) -> None:
        """Raise 429 when one more message would break the configured flood limits."""
        if self._limits is None:
            return
        per_chat, per_second, per_minute = self._limits
        now = time.monotonic()
        times = self._chat_times.setdefault(chat_id, deque())
        while times and now - times[0] >= 60:
            times.popleft()
        while self._global_times and now - self._global_times[0] >= 1:
            self._global_times.popleft()
        waits = [0.0]
        if times and per_chat > 0:
            waits.append(1 / per_chat - (now - times[-1]))
        if chat_id < 0 and len(times) >= per_minute > 0:
            waits.append(60 - (now - times[-per_minute]))
        global_max = max(1, int(per_second))
        if len(self._global_times) >= global_max:
            waits.append(1 - (now - self._global_times[-global_max]))
        if max(waits) > 0:
            seconds = max(1, math.ceil(max(waits)))
            parameters = {"retry_after": seconds}
            raise ApiError(429, f"Too Many Requests: retry after {seconds}", parameters)
        times.append(now)
        self._global_times.append(now)

    def _record(self, method: str, p: dict, message: dict, raw: object, **extra: Any) -> dict:
        """Store the message as the chat now shows it and log the accepted call."""
        key = (message["chat"]["id"], message["message_id"])
        self._messages[key] = message
        options, markup = p.get("link_preview_options"), p.get("reply_markup")
        options = options if isinstance(options, dict) else None
        no_preview = p.get("disable_web_page_preview")
        if no_preview is None and options is not None:
            no_preview = options.get("is_disabled")
        sent = Sent(method, *key, "" if raw is None else str(raw), p.get("parse_mode"), None)
        sent.reply_markup = copy.deepcopy(markup) if isinstance(markup, dict) else None
        sent.disable_web_page_preview, sent.link_preview_options = no_preview, options
        sent.params = dict(p)
        for name, value in extra.items():
            setattr(sent, name, value)
        self._sent.append(sent)
        return copy.deepcopy(message)

    def _new_message(self, chat: dict, parsed: ParsedHtml, markup: dict | None, key: str) -> dict:
        message = {"message_id": self._new_id(chat["id"]), "from": self._bot_user(), "chat": chat}
        message |= {"date": int(time.time())}
        if parsed.text:
            message[key] = parsed.text
        if parsed.entities:
            message["caption_entities" if key == "caption" else "entities"] = parsed.entities
        if markup is not None:
            message["reply_markup"] = markup
        return message

    # ----- methods --------------------------------------------------------------------------
    def api_getfile(self, p: dict, files: dict) -> dict:
        file_id = str(p.get("file_id") or "")
        if file_id not in self._documents:
            raise ApiError(400, "Bad Request: invalid file_id")
        content = self._documents[file_id]
        return {
            "file_id": file_id,
            "file_unique_id": file_id[-8:],
            "file_size": len(content),
            "file_path": f"documents/{file_id}.bib",
        }

    def api_getme(self, p: dict, files: dict) -> dict:
        flags = dict.fromkeys(["can_read_all_group_messages", "supports_inline_queries"], False)
        flags |= dict.fromkeys(["can_connect_to_business", "has_main_web_app"], False)
        return self._bot_user() | {"can_join_groups": True} | flags

    def api_setwebhook(self, p: dict, files: dict) -> bool:
        self._webhook = str(p.get("url") or "") or None
        return True

    def api_deletewebhook(self, p: dict, files: dict) -> bool:
        self._webhook = None
        if p.get("drop_pending_updates"):
            self._updates.clear()
        return True

    def api_getwebhookinfo(self, p: dict, files: dict) -> dict:
        info = {"url": self._webhook or "", "has_custom_certificate": False}
        return info | {"pending_update_count": len(self._updates)}

    def api_getupdates(self, p: dict, files: dict) -> list[dict]:
        """Long poll: answer at once when updates are queued, else wait up to `timeout`."""
        if self._webhook:
            raise ApiError(409, WEBHOOK_CONFLICT)
        if isinstance(p.get("allowed_updates"), list):
            self._allowed = set(p["allowed_updates"]) or None
        offset = p.get("offset")
        if isinstance(offset, int) and offset < 0:
            self._updates = deque(list(self._updates)[offset:])
        elif isinstance(offset, int):
            while self._updates and self._updates[0]["update_id"] < offset:
                self._updates.popleft()
        limit = min(max(int(p.get("limit") or 100), 1), 100)
        self._poll_generation += 1
        generation = self._poll_generation
        deadline = time.monotonic() + float(p.get("timeout") or 0)
        while True:
            kept = deque(update for update in self._updates if self._wanted(update))
            self._updates = kept
            remaining = deadline - time.monotonic()
            if kept or self._closed or remaining <= 0:
                return copy.deepcopy(list(kept)[:limit])
            self._cond.wait(remaining)
            if generation != self._poll_generation:
                raise ApiError(409, CONFLICT)

    def _wanted(self, update: dict) -> bool:
        kind = next((key for key in update if key != "update_id"), "")
        if self._allowed is None:
            return kind not in NOT_DELIVERED_BY_DEFAULT
        return kind in self._allowed

    def api_sendmessage(self, p: dict, files: dict) -> dict:
        chat = self._target(p)
        parsed, markup = self._content(p, "text")
        self._check_rate(chat["id"])
        message = self._new_message(chat, parsed, markup, "text")
        if isinstance(p.get("link_preview_options"), dict):
            message["link_preview_options"] = p["link_preview_options"]
        return self._record("sendMessage", p, message, p.get("text"), visible_text=parsed.text)

    def api_sendphoto(self, p: dict, files: dict) -> dict:
        chat = self._target(p)
        photo = p.get("photo")
        name = (
            str(photo).removeprefix("attach://") if str(photo).startswith("attach://") else "photo"
        )
        upload = files.get(name)
        if isinstance(upload, Upload):
            if not upload.data.startswith(IMAGE_MAGIC):
                raise ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED")
        elif photo in (None, ""):
            raise ApiError(400, "Bad Request: there is no photo in the request")
        elif not str(photo).startswith(("http://", "https://")) and photo not in self._file_ids:
            raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        parsed, markup = self._content(p, "caption", caption=True)
        self._check_rate(chat["id"])
        message = self._new_message(chat, parsed, markup, "caption")
        sizes: list[dict[str, Any]] = []
        for width in (90, 320, 800):
            file_id = f"AgACAgIAAxkBAAI{len(self._file_ids):06d}"
            self._file_ids.add(file_id)
            sizes.append({"file_id": file_id, "file_unique_id": f"AQAD{file_id[-6:]}"})
            sizes[-1] |= {"width": width, "height": width * 3 // 4, "file_size": width * 100}
        message["photo"] = sizes
        photo = upload if isinstance(upload, Upload) else photo
        return self._record(
            "sendPhoto", p, message, p.get("caption"), visible_text=parsed.text, photo=photo
        )

    def api_editmessagetext(self, p: dict, files: dict) -> dict | bool:
        if p.get("inline_message_id"):
            self._content(p, "text")
            return True
        chat = self._target(p)
        message = self._messages.get((chat["id"], p.get("message_id")))  # type: ignore[arg-type]
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message.get("from", {}).get("id") != self.bot_id:
            raise ApiError(400, "Bad Request: message can't be edited")
        if "text" not in message:
            raise ApiError(400, "Bad Request: there is no text in the message to edit")
        parsed, markup = self._content(p, "text")
        same_text = (message["text"], message.get("entities", [])) == (parsed.text, parsed.entities)
        if same_text and message.get("reply_markup") == markup:
            raise ApiError(400, NOT_MODIFIED)
        self._check_rate(chat["id"])
        edited = {k: v for k, v in message.items() if k not in ("entities", "reply_markup")}
        edited |= {"text": parsed.text, "edit_date": int(time.time())}
        if parsed.entities:
            edited["entities"] = parsed.entities
        if markup is not None:
            edited["reply_markup"] = markup
        return self._record("editMessageText", p, edited, p.get("text"), visible_text=parsed.text)

    def api_answercallbackquery(self, p: dict, files: dict) -> bool:
        query_id = str(p.get("callback_query_id", ""))
        if query_id not in self._pending_callbacks:
            raise ApiError(
                400,
                "Bad Request: query is too old and response timeout expired or query ID is invalid",
            )
        self._pending_callbacks.discard(query_id)
        self._answered.append(dict(p) | {"time": time.monotonic()})
        return True

    def api_setmycommands(self, p: dict, files: dict) -> bool:
        error = check_bot_commands(p.get("commands"))
        if error:
            raise ApiError(400, error)
        self._commands[scope_key(p.get("scope"), p.get("language_code"))] = p["commands"]
        return True

    def api_getmycommands(self, p: dict, files: dict) -> list[dict]:
        return copy.deepcopy(
            self._commands.get(scope_key(p.get("scope"), p.get("language_code")), [])
        )

    def api_deletemycommands(self, p: dict, files: dict) -> bool:
        self._commands.pop(scope_key(p.get("scope"), p.get("language_code")), None)
        return True

    def api_sendchataction(self, p: dict, files: dict) -> bool:
        self._target(p)
        if p.get("action") not in CHAT_ACTIONS:
            raise ApiError(400, "Bad Request: wrong parameter action in request")
        return True

    def _member(self, chat_id: int, user_id: int) -> dict:
        user = self._user(user_id)
        status = self._admins.get(chat_id, {}).get(user_id, "member")
        if status == "creator":
            return {"status": "creator", "user": user, "is_anonymous": False}
        if status == "administrator":
            rights = dict.fromkeys(_ADMIN_RIGHTS, True) | {"can_promote_members": False}
            return {
                "status": status,
                "user": user,
                "can_be_edited": False,
                "is_anonymous": False,
            } | rights
        return {"status": "member", "user": user}

    def api_getchatmember(self, p: dict, files: dict) -> dict:
        chat = self._target(p)
        if not isinstance(p.get("user_id"), int):
            raise ApiError(400, "Bad Request: invalid user_id specified")
        return self._member(chat["id"], p["user_id"])

    def api_getchatadministrators(self, p: dict, files: dict) -> list[dict]:
        chat = self._target(p)
        if chat["type"] == "private":
            raise ApiError(400, "Bad Request: there are no administrators in the private chat")
        return [self._member(chat["id"], uid) for uid in self._admins.get(chat["id"], {})]


METHODS: dict[str, str] = {
    name.removeprefix("api_"): name for name in dir(BotApiMethods) if name.startswith("api_")
}
