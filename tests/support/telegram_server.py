"""A fake Telegram Bot API server on 127.0.0.1 for end-to-end tests (never the real Telegram).

The real python-telegram-bot talks to it through `base_url`::

    with serve_fake_telegram() as tg:            # or FakeTelegram().start() ... .stop()
        async with Bot("123:ABC", base_url=tg.base_url) as bot:
            tg.push_message(42, "/start")
            [update] = await bot.get_updates()

It answers `{"ok": true, "result": ...}` or Telegram-shaped errors, rejects what Telegram
rejects (HTML, lengths, keyboards: `telegram_html`), and records every call. Its test side
(`push_message`, `press_button`, `fail_next`, `rate_limit`, `sent`, ...) is thread-safe, so it
serves sync tests and async ones alike. Layout: `telegram_methods` implements the Bot API
methods, `telegram_wire` the HTTP and PTB's request encoding.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.support.telegram_html import utf16_len
from tests.support.telegram_methods import (
    CONFLICT,
    METHODS,
    ApiError,
    BotApiMethods,
    Sent,
    Upload,
    scope_key,
)
from tests.support.telegram_wire import WireServer
from tests.support.waiting import Waitable

__all__ = ["ApiError", "FakeTelegram", "Rejected", "Sent", "Upload", "serve_fake_telegram"]

DEFAULT_USER_ID = 1001  # who speaks in groups unless user_id= is given
DEFAULT_DESCRIPTIONS = {
    400: "Bad Request: chat not found",
    403: "Forbidden: bot was blocked by the user",
    409: CONFLICT,
    500: "Internal Server Error",
    502: "Bad Gateway",
}


def _speaker(chat_id: int, user_id: int | None) -> int:
    """Who sends a message: user_id, else the private chat's user, else DEFAULT_USER_ID."""
    return user_id if user_id is not None else chat_id if chat_id > 0 else DEFAULT_USER_ID


@dataclass
class Rejected:
    """A call answered with an error, and why."""

    method: str
    status: int
    description: str
    params: dict[str, Any]
    time: float
    parameters: dict | None = None


@dataclass
class _Fault:
    method: str
    error: ApiError
    chat_id: int | None
    times: int | None


class FakeTelegram(BotApiMethods, Waitable):
    """State and behaviour of the fake Bot API; start it with `serve_fake_telegram()`."""

    def __init__(
        self, *, bot_username: str = "paperwatch_test_bot", strict_html: bool = True
    ) -> None:
        self.bot_username, self.strict_html = bot_username, strict_html
        self.require_known_chats = False  # True: sending to a chat never seen -> chat not found
        self.url = ""
        self.bot_id = 123456789  # replaced by the numeric part of the token the bot uses
        self._cond = threading.Condition()
        self._closed = False
        self._server: WireServer | None = None
        self._updates: deque[dict] = deque()
        self._next_update_id = 100_000
        self._allowed: set[str] | None = None
        self._poll_generation = 0
        self._webhook: str | None = None
        self._chats: dict[int, dict] = {}
        self._users: dict[int, dict] = {}
        self._messages: dict[tuple[int, int], dict] = {}
        self._last_message_id: dict[int, int] = {}
        self._pending_callbacks: set[str] = set()
        self._admins: dict[int, dict[int, str]] = {}
        self._faults: list[_Fault] = []
        self._limits: tuple[float, float, int] | None = None
        self._chat_times: dict[int, deque[float]] = {}
        self._global_times: deque[float] = deque()
        self._commands: dict[tuple[str, str], list[dict]] = {}
        self._file_ids: set[str] = set()
        self._documents: dict[str, bytes] = {}  # file_id -> content (`push_document`)
        self.downloads: list[str] = []  # file paths fetched
        self._sent: list[Sent] = []
        self._rejected: list[Rejected] = []
        self._calls: list[str] = []
        self._answered: list[dict] = []
        self._too_many = 0

    # ----- lifecycle -----------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """What to pass as PTB's `base_url` (PTB appends `{token}/{method}`)."""
        return f"{self.url}/bot"

    def start(self) -> FakeTelegram:
        """Listen on a free port of 127.0.0.1 in a background thread."""
        server = WireServer(self.dispatch, self._download)
        self._server, self.url = server, f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Wake pending long polls and close the server."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeTelegram:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- test side: incoming traffic --------------------------------------------------------
    def push_message(
        self,
        chat_id: int,
        text: str,
        *,
        user_id: int | None = None,
        chat_type: str = "private",
        username: str | None = None,
        is_bot: bool = False,
        entities: list[dict] | None = None,
        reply_to: int | None = None,
    ) -> dict:
        """Queue a text message (a `channel_post` for channels) and return the Update; with
        `reply_to`, a reply to that message of the chat (as Telegram copies it: an inline
        keyboard kept, a ForceReply not)."""
        with self._cond:
            chat = self._chat(chat_id, chat_type)
            message_id = self._new_id(chat_id)
            message: dict[str, Any] = {"message_id": message_id, "date": int(time.time())}
            message["chat"] = chat
            if chat_type == "channel":
                kind, message["sender_chat"] = "channel_post", chat
            else:
                user = self._user(_speaker(chat_id, user_id), username, is_bot)
                kind, message["from"] = "message", user
                if chat_type == "private" and username:
                    chat["username"] = username
            message["text"] = text
            if reply_to is not None:
                quoted = copy.deepcopy(self._messages[(chat_id, reply_to)])
                if "inline_keyboard" not in quoted.get("reply_markup", {}):
                    quoted.pop("reply_markup", None)
                message["reply_to_message"] = quoted
            if entities is None and text.startswith("/"):
                entities = [
                    {"type": "bot_command", "offset": 0, "length": utf16_len(text.split()[0])}
                ]
            if entities:
                message["entities"] = entities
            self._messages[(chat_id, message_id)] = message
            return self._queue({kind: message})

    def push_document(
        self,
        chat_id: int,
        file_name: str,
        content: bytes,
        *,
        caption: str | None = None,
        mime_type: str = "application/x-bibtex",
        declared_size: int | None = None,
        chat_type: str = "private",
        user_id: int | None = None,
    ) -> dict:
        """Queue a message carrying a document (a file sent to the bot): its `file_size` is
        `declared_size` or the content's; `getFile` and the download serve `content`."""
        with self._cond:
            chat = self._chat(chat_id, chat_type)
            message_id = self._new_id(chat_id)
            file_id = f"BQACAgIAAxkBAAI{len(self._documents):06d}"
            self._documents[file_id] = content
            message: dict[str, Any] = {"message_id": message_id, "date": int(time.time())}
            message["chat"] = chat
            message["from"] = self._user(_speaker(chat_id, user_id), None, False)
            size = len(content) if declared_size is None else declared_size
            message["document"] = {
                "file_id": file_id,
                "file_unique_id": file_id[-8:],
                "file_name": file_name,
                "mime_type": mime_type,
                "file_size": size,
            }
            if caption is not None:
                message["caption"] = caption
            self._messages[(chat_id, message_id)] = message
            return self._queue({"message": message})

    def _download(self, token: str, path: str) -> bytes | None:
        with self._cond:
            self.downloads.append(path)
            file_id = path.removeprefix("documents/").removesuffix(".bib")
            return self._documents.get(file_id)

    def push_update(self, update: dict) -> dict:
        """Queue any raw update (an update_id is assigned when missing) and return it."""
        with self._cond:
            return self._queue(copy.deepcopy(update))

    def press_button(
        self, chat_id: int, message_id: int, data: str, *, user_id: int | None = None
    ) -> dict:
        """Queue a callback_query for a bot message's button (data must be on its keyboard)."""
        with self._cond:
            message = self._messages.get((chat_id, message_id))
            if message is None or message.get("from", {}).get("id") != self.bot_id:
                raise KeyError(f"the bot sent no message {message_id} to chat {chat_id}")
            rows = message.get("reply_markup", {}).get("inline_keyboard", [])
            if data not in [button.get("callback_data") for row in rows for button in row]:
                raise ValueError(f"message {message_id} has no button with callback_data {data!r}")
            query_id = str(7_000_000_000 + self._next_update_id)
            self._pending_callbacks.add(query_id)
            query = {
                "id": query_id,
                "from": self._user(_speaker(chat_id, user_id)),
                "message": copy.deepcopy(message),
            }
            query |= {"chat_instance": str(abs(chat_id) * 7919), "data": data}
            return self._queue({"callback_query": query})

    def push_callback(
        self, chat_id: int, data: str, *, message_id: int = 1, user_id: int | None = None
    ) -> dict:
        """Queue a callback_query with any data, as a forged or stale client would send."""
        with self._cond:
            query_id = str(7_000_000_000 + self._next_update_id)
            self._pending_callbacks.add(query_id)
            message = self._messages.get((chat_id, message_id)) or {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": self._chat(chat_id, "private" if chat_id > 0 else "supergroup"),
                "text": "an old message",
            }
            query = {
                "id": query_id,
                "from": self._user(_speaker(chat_id, user_id)),
                "message": copy.deepcopy(message),
                "chat_instance": str(abs(chat_id) * 7919),
                "data": data,
            }
            return self._queue({"callback_query": query})

    def set_admins(
        self, chat_id: int, user_ids: list[int], *, creator_id: int | None = None
    ) -> None:
        """Who getChatMember/getChatAdministrators report as administrators (and creator)."""
        with self._cond:
            admins = dict.fromkeys(user_ids, "administrator")
            if creator_id is not None:
                admins[creator_id] = "creator"
            self._admins[chat_id] = admins

    # ----- test side: faults and limits -------------------------------------------------------
    def fail_next(
        self,
        method: str,
        status: int,
        description: str | None = None,
        *,
        retry_after: int | None = None,
        migrate_to_chat_id: int | None = None,
        chat_id: int | None = None,
        times: int | None = 1,
    ) -> None:
        """Answer the next `times` calls of `method` ("*" = any; times=None = forever) with an
        error, optionally only for `chat_id`. 429 gets `parameters.retry_after` (default 1)."""
        parameters: dict[str, int] = {}
        if status == 429:
            parameters["retry_after"] = retry_after or 1
            description = description or f"Too Many Requests: retry after {retry_after or 1}"
        if migrate_to_chat_id is not None:
            parameters["migrate_to_chat_id"] = migrate_to_chat_id
            description = description or "Bad Request: group chat was upgraded to a supergroup chat"
        text = description or DEFAULT_DESCRIPTIONS.get(status, f"Error {status}")
        with self._cond:
            error = ApiError(status, text, parameters or None)
            self._faults.append(_Fault(method.lower(), error, chat_id, times))

    def rate_limit(
        self,
        per_chat_per_second: float = 1.0,
        global_per_second: float = 30.0,
        group_per_minute: int = 20,
        *,
        enabled: bool = True,
    ) -> None:
        """Answer 429 + retry_after to sendMessage/sendPhoto/editMessageText over the limits
        (a per-chat or group limit of 0 is none)."""
        with self._cond:
            self._limits = (per_chat_per_second, global_per_second, group_per_minute)
            if not enabled:
                self._limits = None

    # ----- test side: what happened -----------------------------------------------------------
    @property
    def sent(self) -> list[Sent]:
        """Every accepted sendMessage / sendPhoto / editMessageText, in order."""
        with self._cond:
            return list(self._sent)

    @property
    def rejected(self) -> list[Rejected]:
        """Every call answered with an error (validation, fault, flood, 404)."""
        with self._cond:
            return list(self._rejected)

    @property
    def calls(self) -> list[str]:
        """The method names the bot called, in order, as it spelled them."""
        with self._cond:
            return list(self._calls)

    @property
    def answered_callbacks(self) -> list[dict]:
        """The parameters of each accepted answerCallbackQuery (plus `time`)."""
        with self._cond:
            return copy.deepcopy(self._answered)

    @property
    def commands(self) -> list[dict]:
        """The command list last set for the default scope and language."""
        return self.commands_for()

    @property
    def too_many_requests(self) -> int:
        """How many calls were answered 429 (flood limits and injected faults)."""
        with self._cond:
            return self._too_many

    @property
    def pending_updates(self) -> int:
        """Updates queued and not yet confirmed by a getUpdates offset."""
        with self._cond:
            return len(self._updates)

    def commands_for(self, scope: dict | None = None, language_code: str = "") -> list[dict]:
        """The command list setMyCommands set for this scope and language."""
        with self._cond:
            return copy.deepcopy(self._commands.get(scope_key(scope, language_code), []))

    def messages_for(self, chat_id: int) -> list[Sent]:
        """Accepted sends and edits to one chat, in order."""
        return [sent for sent in self.sent if sent.chat_id == chat_id]

    def message(self, chat_id: int, message_id: int) -> dict | None:
        """A message as it is now (after edits), as Telegram would return it."""
        with self._cond:
            return copy.deepcopy(self._messages.get((chat_id, message_id)))

    # ----- internals ------------------------------------------------------------------------
    def _seen(self) -> str:
        return f"calls: {self._calls}"

    def _reject(self, method: str, params: dict, error: ApiError) -> tuple[int, dict]:
        self._too_many += error.status == 429
        self._rejected.append(
            Rejected(
                method, error.status, error.description, params, time.monotonic(), error.parameters
            )
        )
        body = {"ok": False, "error_code": error.status, "description": error.description}
        return error.status, body | ({"parameters": error.parameters} if error.parameters else {})

    def _take_fault(self, method: str, params: dict) -> ApiError | None:
        for fault in self._faults:
            chat_matches = fault.chat_id in (None, params.get("chat_id"))
            if fault.method in ("*", method.lower()) and chat_matches:
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault.error
        return None

    def dispatch(
        self, token: str | None, method: str, params: dict, files: dict
    ) -> tuple[int, dict]:
        """Answer one API call: (HTTP status, JSON body). token None: not a /bot<token>/ path."""
        with self._cond:
            try:
                self._calls.append(method)
                if token is None:
                    raise ApiError(404, "Not Found")
                prefix = token.split(":")[0]
                self.bot_id = int(prefix) if prefix.isdigit() else self.bot_id
                handler = METHODS.get(method.lower())
                if handler is None:
                    raise ApiError(404, "Not Found: method not found")
                fault = self._take_fault(method, params)
                if fault is not None:
                    raise fault
                return 200, {"ok": True, "result": getattr(self, handler)(params, files)}
            except ApiError as error:
                return self._reject(method, params, error)
            except Exception as exc:  # a bug in the fake: answer it rather than drop the line
                failure = ApiError(500, f"Internal Server Error: the fake failed: {exc!r}")
                return self._reject(method, params, failure)
            finally:
                self._cond.notify_all()


@contextmanager
def serve_fake_telegram(
    *, bot_username: str = "paperwatch_test_bot", strict_html: bool = True
) -> Iterator[FakeTelegram]:
    """Run a FakeTelegram on a free port of 127.0.0.1 for the duration of the block."""
    fake = FakeTelegram(bot_username=bot_username, strict_html=strict_html).start()
    try:
        yield fake
    finally:
        fake.stop()
