"""Delivery under the fake's flood limits, from this process (phase A) and from worker
processes (phase C), and how close it came to the fastest the limits allow.

The fake Bot API enforces 30 messages/s overall, 1/s per chat and 20/min per group
(`FakeTelegram.rate_limit(1.0, 30.0)`); the bot runs with its default limits. A private
chats' ceiling is min(30/s, chats x 1/s); with groups it is the fastest schedule the fake's
rules allow (`fastest_schedule`). Each 429 the fake had to send is replayed against the
accepted messages to say which rule it broke.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import itertools
import os
import signal
import subprocess
import time
from collections import Counter, deque
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from bench.delivery_run import (
    CHAT_PER_S,
    GLOBAL_PER_S,
    GROUP_PER_MIN,
    TOKEN,
    deliver,
    queue_alerts,
)
from bench.harness import fresh_database, migrate_to_head, start_module, verdict
from bot.topics.catalog import load_catalog
from tests.support.postgres import PG_URL, registered_processes
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

GOAL_RATIO = 0.95
HEARTBEAT_S = 0.5  # phase C's workers beat this often, to find each other quickly


def fastest_schedule(chat_counts: dict[int, int]) -> float:
    """When the last message goes if each goes as early as the fake's rules allow.

    Rules (as `FakeTelegram.rate_limit(1.0, 30.0)` checks them): at most 30 messages
    in any 1 s, >= 1 s between two messages to a chat, and at most 20 in any 60 s to
    a group (id < 0). Greedy earliest-first is optimal for such release-time rules.
    """
    ready = [(0.0, chat) for chat in chat_counts]
    heapq.heapify(ready)
    left = dict(chat_counts)
    recent: deque[float] = deque()
    history: dict[int, list[float]] = {chat: [] for chat in chat_counts}
    last = 0.0
    while ready:
        at, chat = heapq.heappop(ready)
        while recent and at - recent[0] >= 1.0:
            recent.popleft()
        if len(recent) >= int(GLOBAL_PER_S):
            heapq.heappush(ready, (recent[0] + 1.0, chat))
            continue
        recent.append(at)
        history[chat].append(at)
        last = at
        left[chat] -= 1
        if left[chat]:
            nxt = at + 1.0 / CHAT_PER_S
            sent = history[chat]
            if chat < 0 and len(sent) >= GROUP_PER_MIN:
                nxt = max(nxt, sent[-GROUP_PER_MIN] + 60.0)
            heapq.heappush(ready, (nxt, chat))
    return last


def why_429(fake: FakeTelegram) -> Counter[str]:
    """Which of the fake's rules each 429 broke, replayed from the accepted messages."""
    accepted = sorted((s.time, s.chat_id) for s in fake.sent)
    reasons: Counter[str] = Counter()
    for rejected in fake.rejected:
        if rejected.status != 429:
            continue
        chat, at = int(rejected.params.get("chat_id", 0)), rejected.time
        before = [(t, c) for t, c in accepted if t <= at]
        mine = [t for t, c in before if c == chat]
        if mine and at - mine[-1] < 1.0 / CHAT_PER_S:
            reasons["per chat 1/s"] += 1
        elif chat < 0 and len([t for t in mine if at - t < 60.0]) >= GROUP_PER_MIN:
            reasons["per group 20/min"] += 1
        elif len([t for t, _ in before if at - t < 1.0]) >= GLOBAL_PER_S:
            reasons["overall 30/s"] += 1
        else:
            reasons["other"] += 1
    return reasons


def window_peaks(fake: FakeTelegram) -> dict[str, float]:
    """The busiest 1 s and the tightest same-chat gap the fake accepted."""
    times = sorted(s.time for s in fake.sent)
    peak, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] >= 1.0:
            start += 1
        peak = max(peak, end - start + 1)
    by_chat: dict[int, list[float]] = {}
    for s in fake.sent:
        by_chat.setdefault(s.chat_id, []).append(s.time)
    gaps = [b - a for ts in by_chat.values() for a, b in itertools.pairwise(ts)]
    return {"busiest_second": peak, "min_chat_gap_s": round(min(gaps, default=0.0), 3)}


async def phase_a(
    name: str, chat_ids: list[int], per_chat: int, give_up_after: float
) -> dict[str, Any]:
    with serve_fake_telegram() as fake:
        fake.rate_limit(per_chat_per_second=CHAT_PER_S, global_per_second=GLOBAL_PER_S)
        run = await deliver(
            fake.base_url, chat_ids, per_chat, unlimited=False, give_up_after=give_up_after
        )
        return flood_figures(name, fake, chat_ids, per_chat, run.started, run.complete)


def flood_figures(
    name: str,
    fake: FakeTelegram,
    chat_ids: list[int],
    per_chat: int,
    started: float,
    complete: bool,
) -> dict[str, Any]:
    """How close delivery that began at `started` came to the fake's ceiling."""
    messages = len(chat_ids) * per_chat
    sent = len(fake.sent)
    seconds = max((s.time for s in fake.sent), default=started) - started
    reasons = why_429(fake)
    peaks = window_peaks(fake)
    too_many = fake.too_many_requests
    first_429 = min((r.time for r in fake.rejected if r.status == 429), default=None)
    t0 = min((s.time for s in fake.sent), default=0.0)
    rate = sent / seconds if seconds else 0.0
    ideal = fastest_schedule(dict.fromkeys(chat_ids, per_chat))
    if all(c > 0 for c in chat_ids):
        ceiling = min(GLOBAL_PER_S, len(chat_ids) * CHAT_PER_S)
        basis = f"min({GLOBAL_PER_S:g}/s, {len(chat_ids)} chats x {CHAT_PER_S:g}/s)"
    else:
        ceiling = messages / ideal
        basis = f"{messages} messages in the fastest schedule, {ideal:.1f} s"
    return {
        "phase": name,
        "chats": len(chat_ids),
        "messages": messages,
        "sent": sent,
        "complete": complete,
        "seconds": round(seconds, 2),
        "rate": round(rate, 2),
        "ceiling": round(ceiling, 2),
        "ceiling_basis": basis,
        "ideal_seconds": round(ideal, 2),
        "ratio": round(rate / ceiling, 3),
        "too_many_requests": too_many,
        "why_429": dict(reasons),
        "first_429_after_s": None if first_429 is None else round(first_429 - t0, 2),
        **peaks,
    }


def report_a(f: dict[str, Any]) -> None:
    done = "" if f["complete"] else f" (INCOMPLETE: {f['sent']} of {f['messages']} sent)"
    print(f"phase {f['phase']}: {f['messages']} alerts to {f['chats']} chats{done}")
    print(f"  sustained rate:       {f['rate']:.2f} messages/s over {f['seconds']:.1f} s")
    print(f"  ceiling:              {f['ceiling']:.2f} messages/s = {f['ceiling_basis']}")
    print(f"  fastest the fake allows: all sent {f['ideal_seconds']:.1f} s after the first")
    met = verdict(f["ratio"] >= GOAL_RATIO)
    print(f"  achieved / ceiling:   {f['ratio']:.3f} (goal >= {GOAL_RATIO}): {met}")
    why = ", ".join(f"{k}: {v}" for k, v in f["why_429"].items()) or "none"
    zero = verdict(f["too_many_requests"] == 0)
    print(f"  429s from the fake:   {f['too_many_requests']} (goal 0): {zero}; rule broken: {why}")
    if f["first_429_after_s"] is not None:
        print(f"  first 429:            {f['first_429_after_s']:.2f} s after the first message")
    print(
        f"  busiest 1 s window:   {f['busiest_second']} accepted;"
        f" tightest same-chat gap {f['min_chat_gap_s']:.3f} s"
    )


def start_worker(url: str, base_url: str) -> subprocess.Popen[bytes]:
    """`paperwatch run --role worker` with the default flood limits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "TELEGRAM_"))}
    env |= {
        "PAPERWATCH_DATABASE_URL": url,
        "PAPERWATCH_LOG_LEVEL": "ERROR",
        "PAPERWATCH_DELIVER_INTERVAL": "0.2",
        "PAPERWATCH_HEARTBEAT_INTERVAL": str(HEARTBEAT_S),
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_BASE_URL": base_url,
    }
    return start_module("bot", "run", "--role", "worker", env=env)


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    for worker in workers:
        worker.wait(timeout=30)


async def until_registered(url: str, workers: int) -> None:
    """Until every worker is registered and has seen the others."""
    deadline = time.monotonic() + 60
    while await registered_processes(url) < workers:
        if time.monotonic() > deadline:
            raise SystemExit("phase C: the workers did not start")
        await asyncio.sleep(0.2)
    await asyncio.sleep(3 * HEARTBEAT_S)


async def phase_c(args: argparse.Namespace) -> dict[str, Any] | None:
    """Worker processes on one PostgreSQL database share alerts under the fake's limits."""
    if args.all_cores:  # the fake shares the machine with the workers and the database
        os.sched_setaffinity(0, args.all_cores)
    async with contextlib.AsyncExitStack() as stack:
        try:
            database = fresh_database("postgres", "pw_delivery", migrate=False)
            url = await stack.enter_async_context(database)
        except (OSError, SQLAlchemyError) as exc:
            print(f"phase C skipped: PostgreSQL at {PG_URL} is not reachable ({exc})")
            return None
        await migrate_to_head(url)
        chat_ids = [3000 + n for n in range(args.chats)]
        fake = stack.enter_context(serve_fake_telegram())
        fake.rate_limit(per_chat_per_second=CHAT_PER_S, global_per_second=GLOBAL_PER_S)
        workers = [start_worker(url, fake.base_url) for _ in range(args.workers)]
        stack.callback(stop_workers, workers)
        await until_registered(url, args.workers)
        await queue_alerts(url, chat_ids, args.per_chat, load_catalog())
        started = time.monotonic()
        total = len(chat_ids) * args.per_chat
        with contextlib.suppress(TimeoutError):  # reported as incomplete
            await fake.async_wait_until(lambda f: len(f.sent) >= total, seconds=args.give_up_after)
        await asyncio.sleep(1.0)  # anything extra (a repeat) would show up now
        figures = flood_figures(
            f"C ({args.workers} workers)",
            fake,
            chat_ids,
            args.per_chat,
            started,
            len(fake.sent) >= total,
        )
        distinct = {(m.chat_id, m.text) for m in fake.sent}
        return figures | {"workers": args.workers, "duplicates": len(fake.sent) - len(distinct)}
