"""Keeping tokens and secrets out of the logs, whatever PAPERWATCH_LOG_LEVEL says.

Two rules, applied by `configure_logging` (below; `bot.cli` calls it once):
- the libraries that print what they send never log below INFO: python-telegram-bot
  logs the Bot API URL (it holds the bot token) and every call's parameters at DEBUG
  (setWebhook's `secret_token` among them); httpx, httpcore and aiohttp log URLs;
  slack_sdk logs requests and the Socket Mode URL (its ticket); slack_bolt its requests;
- every configured secret that still reaches a handler is replaced by `[redacted]`, in
  the message, the traceback and the context fields (`extra=`), whatever the format:
  text (FORMAT below) or JSON (`PAPERWATCH_LOG_FORMAT=json`, bot.log_json).

Logs go to stderr, except while the terminal chat has the terminal (`logging_to_file`):
there a log line would land in the middle of what the person is typing.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from bot.log_json import JsonFormatter, context_of

SECRET_BEARING = ("telegram", "httpx", "httpcore", "aiohttp", "slack_sdk", "slack_bolt")
REDACTED = "[redacted]"
_SHORTEST = 4  # shorter "secrets" would blank out ordinary words
# Third-party chatter kept out of INFO logs (slack_sdk.web: "A retry handler found ..."
# for each request it retries, a refused connection at start-up among them).
CHATTY = (
    "httpx",
    "httpcore",
    "aiosqlite",
    "alembic.runtime.migration",
    "apscheduler",
    "slack_sdk.web",
)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The terminal chat's log file: kept to 1 MiB, plus the one before it (.1).
LOG_FILE_BYTES = 1024 * 1024


class RedactSecrets(logging.Filter):
    """A handler filter that replaces each of `secrets` in a record by `[redacted]`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        # Longest first, so a secret that contains another is redacted whole.
        self._secrets = sorted({s for s in secrets if len(s) >= _SHORTEST}, key=len, reverse=True)

    def _clean(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: the handler reports it as usual
            return True
        cleaned = self._clean(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._clean(record.exc_text)
        if record.stack_info:
            record.stack_info = self._clean(record.stack_info)
        for key, value in context_of(record).items():
            if value is None or isinstance(value, int | float | bool):
                continue
            text = str(value)
            if (cleaned := self._clean(text)) != text:
                setattr(record, key, cleaned)
        return True


def keep_secret_bearing_loggers_quiet(level: int) -> None:
    """Never below INFO for the libraries that print URLs and request parameters."""
    for name in SECRET_BEARING:
        logger = logging.getLogger(name)
        logger.setLevel(max(logging.INFO, level, logger.level))


def formatter(log_format: str = "text") -> logging.Formatter:
    """How a line looks: "text" (FORMAT) or "json" (one object a line, bot.log_json)."""
    return JsonFormatter() if log_format == "json" else logging.Formatter(FORMAT)


def configure_logging(level: str, secrets: Iterable[str] = (), log_format: str = "text") -> None:
    """Logs to stderr at `level`, as text or JSON; tokens and `secrets` never show (the two
    rules above)."""
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(formatter(log_format))
    logging.basicConfig(level=level, handlers=[stderr])
    root = logging.getLogger()
    redact = RedactSecrets(secrets)
    for handler in root.handlers:
        handler.addFilter(redact)
    for noisy in CHATTY:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    keep_secret_bearing_loggers_quiet(root.level)


def _to_terminal(handler: logging.Handler) -> bool:
    return (
        type(handler) is logging.StreamHandler  # not a FileHandler, nor pytest's capture
        and getattr(handler, "stream", None) in (sys.stderr, sys.stdout)
    )


@contextlib.contextmanager
def logging_to_file(path: Path) -> Iterator[Path | None]:
    """While inside, log records (and Python's warnings) go to `path` instead of the
    terminal, with the same redaction; on the way out, back to the terminal. Yields the
    path, or None (and changes nothing) when the file cannot be opened.

    For the interactive terminal chat: it owns the terminal, and a record written to
    stderr (the same terminal) would appear in the middle of the prompt, between what
    the person typed and the reply. A file keeps every record at the configured level
    for later (`tail -f`), which stderr at WARNING only would not.
    """
    try:
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_FILE_BYTES, backupCount=1, encoding="utf-8"
        )
    except OSError:
        yield None
        return
    root = logging.getLogger()
    terminal = [h for h in root.handlers if _to_terminal(h)]
    # The same format as the terminal's lines (text or JSON).
    handler.setFormatter(next((h.formatter for h in terminal if h.formatter), formatter()))
    for redact in dict.fromkeys(
        f for h in root.handlers for f in h.filters if isinstance(f, RedactSecrets)
    ):
        handler.addFilter(redact)
    for old in terminal:
        root.removeHandler(old)
    root.addHandler(handler)
    logging.captureWarnings(True)
    try:
        yield path
    finally:
        logging.captureWarnings(False)
        root.removeHandler(handler)
        handler.close()
        for old in terminal:
            root.addHandler(old)
