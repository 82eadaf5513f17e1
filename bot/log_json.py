"""JSON log lines (`PAPERWATCH_LOG_FORMAT=json`): one object a line, for a log collector.

Each line holds `time` (ISO 8601, UTC), `level`, `logger` and `message`, then the record's
context when it has some: the fields of the `log_context` it was logged in (the scheduler job,
`job`; the delivery's `chat_id` and `outbox_id`), those its call passed with `extra=`
(`arxiv_id`, `platform`, `external_chat_id`, `user_id`, `command`), and the text of its
exception (`exception`) and stack (`stack`).
Secrets are taken out before a record is formatted, by the same `RedactSecrets` filter as
text lines (bot.log_secrets), context fields included.

Text lines (the default) show none of these fields: the message already says `chat=`, `id=`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime

# What every LogRecord has; any other attribute of a record came from `extra=`.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}
_CONTEXT: contextvars.ContextVar[dict[str, object] | None] = contextvars.ContextVar(
    "paperwatch_log_context", default=None
)


@contextlib.contextmanager
def log_context(**fields: object) -> Iterator[None]:
    """Records logged inside (and in the tasks started from inside) carry `fields` too, as
    JSON context (a scheduler job's name, the chat and outbox row being delivered)."""
    token = _CONTEXT.set((_CONTEXT.get() or {}) | fields)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def context_of(record: logging.LogRecord) -> dict[str, object]:
    """A record's context: the fields of the `log_context` it is logged in, and those its
    call added with `extra=` (which win, as do the redacted copies `RedactSecrets` sets)."""
    extra = {
        key: value
        for key, value in record.__dict__.items()
        if key not in _STANDARD and not key.startswith("_")
    }
    return (_CONTEXT.get() or {}) | extra


def _plain(value: object) -> object:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (newlines in the text are escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in context_of(record).items():
            line.setdefault(key, _plain(value))
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False)
