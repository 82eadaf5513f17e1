"""The command rate limit, applied by `Registry.dispatch` for every adapter."""

from __future__ import annotations

import asyncio

from bot.domain import ChatKind, ChatRef, Command, Platform, Reply, Role
from handlers.base import TOO_FAST, CommandSpec, Context, Registry
from handlers.rate_limit import CommandRateLimit

SLOW = 0.001  # a minute's rate so low that no bucket drains during a test


class Counted:
    """A command that counts how often it actually ran."""

    def __init__(self) -> None:
        self.runs = 0
        self.registry = Registry([CommandSpec("list", self.handler, "list", "/list")])

    async def handler(self, cmd: Command, ctx: Context) -> Reply:
        self.runs += 1
        return Reply.text("ok")


def context(limit: CommandRateLimit) -> Context:
    return Context(uow=None, catalog=None, rate_limit=limit)  # type: ignore[arg-type]


def command(chat: str = "-100", user: str = "5", platform: Platform = Platform.TELEGRAM) -> Command:
    return Command("list", "", ChatRef(platform, chat), ChatKind.GROUP, user_id=user)


async def test_a_flood_is_told_once_and_runs_nothing() -> None:
    counted = Counted()
    ctx = context(CommandRateLimit(per_user=SLOW, per_chat=1000, burst=2))
    replies = [await counted.registry.dispatch(command(), ctx) for _ in range(6)]
    assert [r.lines for r in replies[:3]] == [("ok",), ("ok",), (TOO_FAST,)]
    assert replies[2].is_error and replies[2].denied
    assert all(r.is_empty and r.denied for r in replies[3:])  # no answer: no counter-flood
    assert counted.runs == 2
    # Another person in another chat is not held up.
    assert (await counted.registry.dispatch(command("-200", "6"), ctx)).lines == ("ok",)


async def test_a_busy_chat_is_limited_whoever_writes() -> None:
    counted = Counted()
    ctx = context(CommandRateLimit(per_user=1000, per_chat=SLOW, burst=3))
    replies = [await counted.registry.dispatch(command(user=str(u)), ctx) for u in range(5)]
    assert [r.lines[0] if r.lines else None for r in replies] == ["ok"] * 3 + [TOO_FAST, None]
    assert counted.runs == 3


async def test_after_a_flood_drains_the_next_one_is_told_again() -> None:
    counted = Counted()
    ctx = context(CommandRateLimit(per_user=6000, per_chat=6000, burst=1))  # 100 a second
    first = [await counted.registry.dispatch(command(), ctx) for _ in range(3)]
    assert [r.lines for r in first] == [("ok",), (TOO_FAST,), ()]
    await asyncio.sleep(0.05)  # at least 5 commands' worth of draining
    again = [await counted.registry.dispatch(command(), ctx) for _ in range(3)]
    assert [r.lines for r in again] == [("ok",), (TOO_FAST,), ()]


async def test_the_terminal_is_never_limited() -> None:
    counted = Counted()
    ctx = context(CommandRateLimit(per_user=SLOW, per_chat=SLOW, burst=1))
    console = Command(
        "list", "", ChatRef(Platform.CONSOLE, "1"), user_id="console", role=Role.OWNER
    )
    for _ in range(50):
        assert (await counted.registry.dispatch(console, ctx)).lines == ("ok",)


async def test_memory_stays_bounded_whatever_the_number_of_senders() -> None:
    limit = CommandRateLimit(per_user=SLOW, per_chat=SLOW, burst=2, max_keys=64)
    counted = Counted()
    ctx = context(limit)
    for n in range(1000):
        await counted.registry.dispatch(command(chat=str(n), user=str(n)), ctx)
        assert len(limit) <= 64
    assert counted.runs == 1000


async def test_internal_reads_are_not_counted() -> None:
    counted = Counted()
    ctx = context(CommandRateLimit(per_user=SLOW, per_chat=SLOW, burst=1))
    for _ in range(5):
        assert (await counted.registry.dispatch(command(), ctx, limited=False)).lines == ("ok",)
    assert (await counted.registry.dispatch(command(), ctx)).lines == ("ok",)
