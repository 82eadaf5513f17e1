"""JSON log lines: one object a line, with time, level, logger, message and the record's
context, redacted by the same filter as text lines."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from bot.log_json import log_context
from bot.log_secrets import RedactSecrets, formatter, logging_to_file

SECRET = "123456:VERY-SECRET-token"


class Holder:
    """An object whose text holds the secret (an SDK's request, say)."""

    def __str__(self) -> str:
        return f"<request /bot{SECRET}/getMe>"


@pytest.fixture
def logger() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger whose lines go through what `configure_logging(..., "json")` sets up."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter("json"))
    handler.addFilter(RedactSecrets([SECRET]))
    log = logging.getLogger("test.log_json")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    yield log, stream
    log.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict]:
    text = stream.getvalue()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_each_record_is_one_object_with_time_level_logger_and_message(logger) -> None:
    log, stream = logger
    log.info("stored papers new=%d", 3)
    log.warning("two\nlines")
    first, second = lines(stream)
    assert first["level"] == "INFO" and first["logger"] == "test.log_json"
    assert first["message"] == "stored papers new=3"
    when = datetime.fromisoformat(first["time"])
    assert when.utcoffset().total_seconds() == 0  # UTC, whatever the machine's zone
    assert second["message"] == "two\nlines" and second["level"] == "WARNING"
    assert "chat_id" not in first and "exception" not in first and "job" not in first


def test_context_fields_and_the_job(logger) -> None:
    log, stream = logger
    with log_context(job="deliver"), log_context(chat_id=7, outbox_id=42):
        log.info("rate limited chat=%s", 7)
    log.warning("skipping id=%s", "2401.00001", extra={"arxiv_id": "2401.00001"})
    first, second = lines(stream)
    assert first["chat_id"] == 7 and first["outbox_id"] == 42 and first["job"] == "deliver"
    assert second["arxiv_id"] == "2401.00001" and "job" not in second


def test_secrets_are_redacted_in_message_exception_and_context(logger) -> None:
    log, stream = logger
    try:
        raise RuntimeError(f"POST /bot{SECRET}/sendMessage refused")
    except RuntimeError:
        with log_context(job="deliver", url=f"/bot{SECRET}/getMe"):
            log.exception(
                "send failed url=%s",
                f"https://api.telegram.org/bot{SECRET}/sendMessage",
                extra={"command": f"/start {SECRET}", "request": Holder(), "chat_id": 5},
            )
    (line,) = lines(stream)
    assert SECRET not in stream.getvalue()
    assert SECRET.split(":")[1] not in stream.getvalue()
    assert "bot[redacted]/sendMessage" in line["message"]
    assert "Traceback" in line["exception"] and "[redacted]" in line["exception"]
    assert line["command"] == "/start [redacted]"
    assert line["request"] == "<request /bot[redacted]/getMe>"
    assert line["chat_id"] == 5 and line["job"] == "deliver"
    assert line["url"] == "/bot[redacted]/getMe"


def test_the_terminal_chats_log_file_keeps_the_json_format(tmp_path: Path) -> None:
    terminal = logging.StreamHandler(sys.stderr)
    terminal.setFormatter(formatter("json"))
    terminal.addFilter(RedactSecrets([SECRET]))
    root = logging.getLogger()
    before = root.handlers[:]
    root.handlers[:] = [terminal]  # as `configure_logging` leaves it, whatever ran before
    path = tmp_path / "paperwatch.log"
    try:
        with logging_to_file(path):
            logging.getLogger("bot.services.poll").warning("poll failed token=%s", SECRET)
    finally:
        root.handlers[:] = before
    (line,) = (json.loads(text) for text in path.read_text().splitlines())
    assert line["message"] == "poll failed token=[redacted]"
    assert line["logger"] == "bot.services.poll"
