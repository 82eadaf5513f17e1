"""JSON log lines carry their context: the delivery worker's chat and outbox row and the job
it ran in, a command's chat, user and name; a secret in any of them is redacted."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from bot.domain import ChatRef, Command, Platform, Role
from bot.log_secrets import RedactSecrets, formatter
from bot.ports import RateLimited, Transient
from bot.scheduler import Jobs
from bot.services.deliver import Deliverer
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.integration.test_delivery import START, WEB_RL, Clock, Recorder, ingest, say

SECRET = "987654:SECRET-bot-token-value"


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The root handler `configure_logging(..., "json")` installs, on a buffer."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter("json"))
    handler.addFilter(RedactSecrets([SECRET]))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def parsed(stream: io.StringIO, logger: str) -> list[dict]:
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    assert SECRET not in stream.getvalue()
    return [line for line in lines if line["logger"] == logger]


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


async def test_delivery_lines_name_the_chat_the_row_and_the_job(
    db: Database, small_catalog, clock: Clock, json_lines: io.StringIO
) -> None:
    chat_ctx = Context(uow=db.uow, catalog=small_catalog, clock=clock)
    recorder = Recorder()
    jobs = Jobs(db, None, Deliverer(db.uow, {"console": recorder}, small_catalog, clock=clock))
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)
    recorder.failures += [RateLimited(7), Transient(f"POST /bot{SECRET}/sendMessage timed out")]
    await jobs.deliver()
    clock.advance(minutes=1)
    await jobs.deliver()
    limited, failed = parsed(json_lines, "bot.services.deliver")
    assert limited["message"].startswith("rate limited outbox=")
    assert failed["message"].startswith("delivery failed outbox=")
    assert "/bot[redacted]/sendMessage" in failed["message"]
    for line in (limited, failed):
        assert line["job"] == "deliver"
        assert isinstance(line["chat_id"], int) and isinstance(line["outbox_id"], int)
        assert f"chat={line['chat_id']}" in line["message"]
        assert f"outbox={line['outbox_id']}" in line["message"]


async def test_command_lines_name_the_chat_the_user_and_the_command(
    ctx: Context, json_lines: io.StringIO
) -> None:
    async def lookup_fails() -> Role:
        raise RuntimeError(f"getChatMember /bot{SECRET}/ refused")

    command = Command(
        name="follow",
        args="Web Agents",
        chat=ChatRef(Platform.TELEGRAM, "-100123"),
        user_id="42",
        role=Role.MEMBER,
    )
    reply = await REGISTRY.dispatch(command, ctx, lookup_role=lookup_fails)
    assert reply.denied
    lookup, refused = parsed(json_lines, "handlers.base")
    assert lookup["message"].startswith("role lookup failed")
    assert "getChatMember /bot[redacted]/ refused" in lookup["exception"]
    assert refused["message"].startswith("command refused command=follow")
    for line in (lookup, refused):
        assert line["platform"] == "telegram" and line["external_chat_id"] == "-100123"
        assert line["user_id"] == "42" and line["command"] == "follow"
