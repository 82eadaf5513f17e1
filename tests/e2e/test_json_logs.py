"""`PAPERWATCH_LOG_FORMAT=json`: a real `paperwatch run` (webhook mode, DEBUG, the fake
Telegram server and a fake arXiv) writes only JSON objects to stderr, one a line, each with
time, level, logger and message; the lines carry their context (the job, the chat, the
arXiv id), and no token or webhook secret shows, as in text mode
(tests/e2e/test_secrets_in_logs.py)."""

from __future__ import annotations

import json
import signal
import time
from datetime import datetime
from pathlib import Path

from tests.e2e.test_secrets_in_logs import (
    SMALL_RSS,
    TOKEN,
    WEBHOOK_SECRET,
    free_port,
    post_until_accepted,
    start_update,
    webhook_bot,
)
from tests.support.arxiv_server import Canned, serve_fake_arxiv
from tests.support.telegram_server import serve_fake_telegram

# The first paper of the feed with a version no paper has: skipped, logged with its id.
BAD_ID = "2609.26811v99999999999999999999"


def hostile_feed() -> bytes:
    return SMALL_RSS.read_bytes().replace(b"2609.26811v1", BAD_ID.encode())


def run_bot(tmp_path: Path) -> str:
    """stderr of `paperwatch run` that answered /start twice, the second time rate limited."""
    port = free_port()
    with serve_fake_arxiv() as arxiv, serve_fake_telegram() as telegram:
        arxiv.add("/rss/cs.LG", Canned(hostile_feed()))
        process = webhook_bot(
            tmp_path,
            arxiv.url,
            telegram.base_url,
            port,
            PAPERWATCH_LOG_FORMAT="json",
            PAPERWATCH_COMMAND_BURST="1",
        )
        try:
            telegram.wait_until(lambda f: "setWebhook" in f.calls, seconds=60)
            url = f"http://127.0.0.1:{port}/telegram"
            for update_id in (1, 2):
                update = json.loads(start_update(11)) | {"update_id": update_id}
                body = json.dumps(update).encode()
                response = post_until_accepted(url, body, time.monotonic() + 30)
                assert response.status_code == 200
                telegram.wait_until(lambda f, n=update_id: len(f.messages_for(11)) == n, 30)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
    return stderr


def test_json_logs_parse_carry_context_and_hide_secrets(tmp_path: Path) -> None:
    stderr = run_bot(tmp_path)
    lines = [json.loads(text) for text in stderr.splitlines()]  # every line is one object
    assert lines
    for line in lines:
        assert {"time", "level", "logger", "message"} <= set(line), line
        assert datetime.fromisoformat(line["time"]).utcoffset().total_seconds() == 0
    assert any(line["level"] == "DEBUG" for line in lines)  # debug logging was on
    assert TOKEN not in stderr and TOKEN.split(":")[1] not in stderr
    assert WEBHOOK_SECRET not in stderr

    (skipped,) = [line for line in lines if "skipping a bad arXiv entry" in line["message"]]
    assert BAD_ID in skipped["arxiv_id"] and skipped["job"] == "poll"
    (polled,) = [line for line in lines if line["message"].startswith("arxiv poll source=")]
    assert polled["job"] == "poll" and polled["logger"] == "bot.services.poll"
    (limited,) = [line for line in lines if line["message"].startswith("command rate limited")]
    assert limited["platform"] == "telegram" and limited["external_chat_id"] == "11"
    assert limited["user_id"] == "11" and limited["command"] == "start"
