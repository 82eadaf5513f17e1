"""Outbox delivery through the real Telegram messenger against the fake Bot API server.

    .venv/bin/python -m bench.bench_delivery [--phase all|a|b|c]
        [--chats 60] [--per-chat 10] [--groups 10] [--per-group 22]
        [--fast-chats 200] [--fast-per-chat 10] [--rounds 3] [--profile] [--workers 2]

Alerts are queued on a fresh SQLite file (instant chats following one topic, new papers
stored with `bot.ingest.store`), then a `Deliverer` drains them through a
`TelegramAdapter` started with `receive_updates=False` against `FakeTelegram`. This
process keeps to one core (the last it may use); the fake gets another where it can.

Phase A (flood limits): the fake, in this process's threads, enforces 30 messages/s
overall, 1/s per chat and 20/min per group (`fake.rate_limit(1.0, 30.0)`), the bot runs
with its default limits. A1 sends to private chats, A2 to group chats (ids < 0) with
more than 20 messages each, so the per-group minute limit matters. Reported: the
sustained rate (messages / seconds from the start of delivery to the last accepted
message), the ratio to the ceiling, the 429s the fake had to send (goal 0) and which of
its rules each one broke. A1's ceiling is min(30/s, chats x 1/s) (goal ratio >= 0.95);
A2's is the fastest schedule the fake's rules allow (a greedy simulation: each message
as early as every rule permits).

Phase B (no ceiling): fake limits off, the bot's limits set to 10^6. The fake runs in a
child process on the other core, so this process's CPU time is the bot's alone (event
loop, SQLite's thread, PTB, aiohttp): the bot's own cost = that CPU time / messages
sent. Also reported: messages/s delivered (wall time from the start of delivery to the
last message the fake accepted) and the fake's CPU per message. Each of `--rounds`
rounds starts afresh; the figures are the rounds' medians, because this machine's speed
drifts by a third from one minute to the next. Goal: <= 2 ms/message (>= 500
messages/s per process).

Phase C (several processes): `--workers` `paperwatch run --role worker` processes on
one fresh PostgreSQL database (`PAPERWATCH_TEST_POSTGRES_URL`, skipped when it cannot
be reached) deliver A1's alerts under the same fake limits, sharing the overall rate
and the chats (`bot.delivery.peers`). Reported as A1, plus messages sent twice (goal
0). The workers and the fake share the machine's cores; this process stops keeping
to one core first.

The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import heapq
import io
import itertools
import json
import logging
import os
import pstats
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.config import Settings
from bot.delivery.worker import Deliverer
from bot.domain import ChatKind, ChatRef, Paper, Platform, SubscriptionKind
from bot.ingest import paper_from_json, store
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.commands import REGISTRY
from storage.database import Database
from tests.support.postgres import (
    PG_URL,
    create_database,
    drop_database,
    registered_processes,
)
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

ROOT = Path(__file__).resolve().parents[1]

TOKEN = "123456:BENCH-token"
GLOBAL_PER_S = 30.0
CHAT_PER_S = 1.0
GROUP_PER_MIN = 20
GOAL_RATIO = 0.95
GOAL_MS = 2.0
TOPIC = ("rl-for-llm-agents", "RL for LLM Agents")
UNLIMITED = 1_000_000.0
HEARTBEAT_S = 0.5  # phase C's workers beat this often, to find each other quickly
SAMPLE = ROOT / "tests" / "fixtures" / "papers_sample.jsonl"


# --- queueing ------------------------------------------------------------------------


def real_papers(count: int) -> list[Paper]:
    """Real arXiv papers (titles, abstracts, authors), so that rendering costs what it will."""
    with SAMPLE.open(encoding="utf-8") as lines:
        papers = [paper_from_json(json.loads(line)) for line in itertools.islice(lines, count)]
    if len(papers) < count:
        raise SystemExit(f"{SAMPLE} has only {len(papers)} papers; asked for {count}")
    return papers


async def queue_alerts(url: str, chat_ids: list[int], papers: int, catalog: Catalog) -> int:
    """Every chat (instant alerts) follows one topic; `papers` new papers arrive on it."""
    db = Database(url)
    await db.upgrade()
    async with db.uow() as uow:
        for external in chat_ids:
            kind = ChatKind.PRIVATE if external > 0 else ChatKind.GROUP
            chat = await uow.chats.get_or_create(ChatRef(Platform.TELEGRAM, str(external)), kind)
            await uow.chats.update(chat.id, digest_mode="instant")
            await uow.subscriptions.add(
                chat.id, SubscriptionKind.TOPIC, TOPIC[0], TOPIC[1], TOPIC[0]
            )
        batch = [
            replace(paper, announced=date(2026, 11, 2), tags=(TOPIC[1],))
            for paper in real_papers(papers)
        ]
        await store(uow, batch, catalog, datetime.now(UTC))
        await uow.commit()
        counts = await uow.outbox.counts()
    await db.dispose()
    return counts.get("pending", 0)


def settings_for(base_url: str, url: str, *, unlimited: bool) -> Settings:
    """Settings as the worker would read them; `unlimited` lifts the bot's flood limits."""
    values: dict[str, Any] = {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_BASE_URL": base_url,
        "PAPERWATCH_DATABASE_URL": url,
    }
    if unlimited:
        values |= {
            "TELEGRAM_MESSAGES_PER_SECOND": UNLIMITED,
            "TELEGRAM_CHAT_MESSAGES_PER_SECOND": UNLIMITED,
            "TELEGRAM_GROUP_MESSAGES_PER_MINUTE": UNLIMITED,
        }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass(slots=True)
class Run:
    """What one delivery run did, seen from the bot's side."""

    messages: int
    started: float  # time.monotonic() when delivery began
    cpu_seconds: float  # this process's CPU time over the run
    complete: bool
    outbox: dict[str, int]


async def deliver(
    base_url: str,
    chat_ids: list[int],
    papers: int,
    *,
    unlimited: bool,
    give_up_after: float,
    profile: cProfile.Profile | None = None,
) -> Run:
    """Queue alerts on a fresh SQLite file and drain them through the real messenger."""
    catalog = load_catalog()
    with tempfile.TemporaryDirectory(prefix="pw-delivery-") as folder:
        url = f"sqlite+aiosqlite:///{folder}/delivery.db"
        rows = await queue_alerts(url, chat_ids, papers, catalog)  # one per chat
        db = Database(url)
        adapter = TelegramAdapter(
            settings_for(base_url, url, unlimited=unlimited),
            REGISTRY,
            Context(uow=db.uow, catalog=catalog),
        )
        await adapter.start(receive_updates=False)
        deliverer = Deliverer(db.uow, {"telegram": adapter.messenger}, catalog)
        complete = False
        outbox: dict[str, int] = {}
        try:
            if profile is not None:
                profile.enable()
            cpu, started = time.process_time(), time.monotonic()
            deadline = started + give_up_after
            while time.monotonic() < deadline:
                await deliverer.drain()
                async with db.uow() as uow:
                    outbox = await uow.outbox.counts()
                if outbox.get("sent", 0) >= rows:
                    complete = True
                    break
                await asyncio.sleep(0.02)  # rows waiting out a 429 become due later
            cpu = time.process_time() - cpu
        finally:
            if profile is not None:
                profile.disable()
            await adapter.stop()
            await db.dispose()
    return Run(len(chat_ids) * papers, started, cpu, complete, outbox)


# --- phase A: flood limits -----------------------------------------------------------


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
    verdict = "ok" if f["ratio"] >= GOAL_RATIO else "MISSED"
    done = "" if f["complete"] else f" (INCOMPLETE: {f['sent']} of {f['messages']} sent)"
    print(f"phase {f['phase']}: {f['messages']} alerts to {f['chats']} chats{done}")
    print(f"  sustained rate:       {f['rate']:.2f} messages/s over {f['seconds']:.1f} s")
    print(f"  ceiling:              {f['ceiling']:.2f} messages/s = {f['ceiling_basis']}")
    print(f"  fastest the fake allows: all sent {f['ideal_seconds']:.1f} s after the first")
    print(f"  achieved / ceiling:   {f['ratio']:.3f} (goal >= {GOAL_RATIO}): {verdict}")
    why = ", ".join(f"{k}: {v}" for k, v in f["why_429"].items()) or "none"
    zero = "ok" if f["too_many_requests"] == 0 else "MISSED"
    print(f"  429s from the fake:   {f['too_many_requests']} (goal 0): {zero}; rule broken: {why}")
    if f["first_429_after_s"] is not None:
        print(f"  first 429:            {f['first_429_after_s']:.2f} s after the first message")
    print(
        f"  busiest 1 s window:   {f['busiest_second']} accepted;"
        f" tightest same-chat gap {f['min_chat_gap_s']:.3f} s"
    )


# --- phase B: no ceiling -------------------------------------------------------------


def fake_server(cores: str) -> None:
    """Child process: a FakeTelegram; each line on stdin asks for a JSON line of figures."""
    if cores:
        os.sched_setaffinity(0, {int(core) for core in cores.split(",")})
    with serve_fake_telegram() as fake:
        print(json.dumps({"base_url": fake.base_url}), flush=True)
        for _ in sys.stdin:
            sent = fake.sent
            figures = {
                "cpu": time.process_time(),
                "sent": len(sent),
                "last": sent[-1].time if sent else None,
                "sample": sent[-1].params if sent else None,
                "too_many_requests": fake.too_many_requests,
            }
            print(json.dumps(figures, default=str), flush=True)


class FakeProcess:
    """A fake Bot API in a child process, so that this process's CPU time is the bot's."""

    def __init__(self, cores: set[int]) -> None:
        cores = ",".join(map(str, sorted(cores)))
        self._child = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_delivery", "--role=fake", f"--cores={cores}"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.base_url = self._read()["base_url"]

    def _read(self) -> dict[str, Any]:
        assert self._child.stdout is not None
        line = self._child.stdout.readline()
        if not line:
            raise RuntimeError("the fake's process ended early")
        return json.loads(line)

    def figures(self) -> dict[str, Any]:
        assert self._child.stdin is not None
        self._child.stdin.write("\n")
        self._child.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self._child.stdin is not None
        self._child.stdin.close()
        self._child.wait(timeout=10)


def split_cores() -> tuple[set[int], set[int]]:
    """One core for the bot (this process) and, if there is another, one for the fake."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cores) < 2:
        return set(cores), set(cores)
    return {cores[-1]}, {cores[0]}


async def round_b(
    chats: int,
    per_chat: int,
    give_up_after: float,
    profile: cProfile.Profile | None,
    fake_cores: set[int],
) -> dict[str, Any]:
    """One drain of `chats` x `per_chat` alerts on a fresh database and a fresh fake."""
    chat_ids = [2000 + n for n in range(chats)]
    fake = FakeProcess(fake_cores)
    try:
        before = fake.figures()
        run = await deliver(
            fake.base_url,
            chat_ids,
            per_chat,
            unlimited=True,
            give_up_after=give_up_after,
            profile=profile,
        )
        after = fake.figures()
    finally:
        fake.close()
    sent = after["sent"] - before["sent"]
    seconds = (after["last"] or run.started) - run.started
    per = max(sent, 1)
    return {
        "messages": run.messages,
        "sent": sent,
        "complete": run.complete,
        "seconds": round(seconds, 3),
        "messages_per_s": round(sent / seconds, 1) if seconds > 0 else 0.0,
        "bot_ms_per_message": round(1000 * run.cpu_seconds / per, 3),
        "fake_cpu_ms_per_message": round(1000 * (after["cpu"] - before["cpu"]) / per, 3),
        "too_many_requests": after["too_many_requests"] - before["too_many_requests"],
    }


async def phase_b(args: argparse.Namespace, profile: cProfile.Profile | None) -> dict[str, Any]:
    """`--rounds` rounds; the figures are their medians (this machine's speed drifts)."""
    rounds = []
    for _ in range(args.rounds):
        rounds.append(
            await round_b(
                args.fast_chats, args.fast_per_chat, args.give_up_after, profile, args.fake_cores
            )
        )
    bot_ms = statistics.median(r["bot_ms_per_message"] for r in rounds)
    return {
        "chats": args.fast_chats,
        "messages": sum(r["messages"] for r in rounds),
        "sent": sum(r["sent"] for r in rounds),
        "complete": all(r["complete"] for r in rounds),
        "bot_ms_per_message": bot_ms,
        "bot_messages_per_s": round(1000 / bot_ms, 1) if bot_ms > 0 else None,
        "messages_per_s": statistics.median(r["messages_per_s"] for r in rounds),
        "fake_cpu_ms_per_message": statistics.median(r["fake_cpu_ms_per_message"] for r in rounds),
        "too_many_requests": sum(r["too_many_requests"] for r in rounds),
        "rounds": rounds,
    }


def report_b(f: dict[str, Any]) -> None:
    verdict = "ok" if f["bot_ms_per_message"] <= GOAL_MS else "MISSED"
    done = "" if f["complete"] else f" (INCOMPLETE: {f['sent']} of {f['messages']} sent)"
    each = [r["bot_ms_per_message"] for r in f["rounds"]]
    print(
        f"phase B: {len(each)} rounds of {f['rounds'][0]['messages']} alerts to {f['chats']}"
        f" chats, no flood limits{done}"
    )
    print(
        f"  bot's own cost:       {f['bot_ms_per_message']:.3f} ms of CPU per message (median;"
        f" rounds {', '.join(f'{ms:.3f}' for ms in each)})"
        f" = {f['bot_messages_per_s']:.0f} messages/s, goal <= {GOAL_MS:g} ms: {verdict}"
    )
    print(f"  delivered:            {f['messages_per_s']:.0f} messages/s (median)")
    print(
        f"  the fake's own cost:  {f['fake_cpu_ms_per_message']:.3f} ms of CPU per message"
        f" (median); 429s: {f['too_many_requests']}"
    )


def print_profile(profile: cProfile.Profile, limit: int = 25) -> None:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(limit)
    print("  profile of phase B's event loop thread (top by own time):")
    for line in out.getvalue().splitlines():
        if line.strip():
            print(f"    {line}")


# --- phase C: several processes ------------------------------------------------------


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
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "run", "--role", "worker"],
        cwd=ROOT,
        env=env,
    )


async def phase_c(args: argparse.Namespace) -> dict[str, Any] | None:
    """Worker processes on one PostgreSQL database share alerts under the fake's limits."""
    if args.all_cores:  # the fake shares the machine with the workers and the database
        os.sched_setaffinity(0, args.all_cores)
    try:
        url = await create_database("pw_delivery")
    except (OSError, SQLAlchemyError) as exc:
        print(f"phase C skipped: PostgreSQL at {PG_URL} is not reachable ({exc})")
        return None
    chat_ids = [3000 + n for n in range(args.chats)]
    try:
        db = Database(url)
        await db.upgrade()
        await db.dispose()
        with serve_fake_telegram() as fake:
            fake.rate_limit(per_chat_per_second=CHAT_PER_S, global_per_second=GLOBAL_PER_S)
            workers = [start_worker(url, fake.base_url) for _ in range(args.workers)]
            try:
                deadline = time.monotonic() + 60
                while await registered_processes(url) < args.workers:
                    if time.monotonic() > deadline:
                        raise SystemExit("phase C: the workers did not start")
                    await asyncio.sleep(0.2)
                await asyncio.sleep(3 * HEARTBEAT_S)  # each has seen the others
                await queue_alerts(url, chat_ids, args.per_chat, load_catalog())
                started = time.monotonic()
                total = len(chat_ids) * args.per_chat
                with contextlib.suppress(TimeoutError):  # reported as incomplete
                    await fake.async_wait_until(
                        lambda f: len(f.sent) >= total, seconds=args.give_up_after
                    )
                await asyncio.sleep(1.0)  # anything extra (a repeat) would show up now
                figures = flood_figures(
                    f"C ({args.workers} workers)",
                    fake,
                    chat_ids,
                    args.per_chat,
                    started,
                    len(fake.sent) >= total,
                )
                figures["workers"] = args.workers
                distinct = {(m.chat_id, m.text) for m in fake.sent}
                figures["duplicates"] = len(fake.sent) - len(distinct)
            finally:
                for worker in workers:
                    worker.send_signal(signal.SIGTERM)
                for worker in workers:
                    worker.wait(timeout=30)
    finally:
        await drop_database(url)
    return figures


# --- main ----------------------------------------------------------------------------


async def run_phases(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if args.phase in ("all", "a"):
        private = [1000 + n for n in range(args.chats)]
        results["a1"] = await phase_a("A1", private, args.per_chat, args.give_up_after)
        report_a(results["a1"])
        if args.groups:
            groups = [-1_000_000 - n for n in range(args.groups)]
            results["a2"] = await phase_a("A2", groups, args.per_group, args.give_up_after)
            report_a(results["a2"])
    if args.phase in ("all", "b"):
        profile = cProfile.Profile() if args.profile else None
        results["b"] = await phase_b(args, profile)
        report_b(results["b"])
        if profile is not None:
            print_profile(profile)
    if args.phase in ("all", "c") and (figures := await phase_c(args)) is not None:
        results["c"] = figures
        report_a(figures)
        print(f"  messages sent twice:  {figures['duplicates']} (goal 0)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--phase", choices=("all", "a", "b", "c"), default="all")
    parser.add_argument("--chats", type=int, default=60, help="A1 and C: private chats")
    parser.add_argument("--per-chat", type=int, default=10, help="A1 and C: alerts per chat")
    parser.add_argument("--workers", type=int, default=2, help="C: worker processes")
    parser.add_argument("--groups", type=int, default=10, help="A2: group chats (0 = skip)")
    parser.add_argument("--per-group", type=int, default=22, help="A2: alerts per group")
    parser.add_argument("--fast-chats", type=int, default=200, help="B: private chats")
    parser.add_argument("--fast-per-chat", type=int, default=10, help="B: alerts per chat")
    parser.add_argument(
        "--give-up-after", type=float, default=150.0, help="seconds per run at most"
    )
    parser.add_argument("--rounds", type=int, default=3, help="B: rounds (median reported)")
    parser.add_argument("--profile", action="store_true", help="cProfile phase B")
    parser.add_argument("--verbose", action="store_true", help="show the bot's log")
    parser.add_argument(
        "--role", choices=("bench", "fake"), default="bench", help=argparse.SUPPRESS
    )
    parser.add_argument("--cores", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "fake":
        fake_server(args.cores)
        return
    args.all_cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    bot_cores, args.fake_cores = split_cores()
    if bot_cores:
        os.sched_setaffinity(0, bot_cores)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR)
    results = asyncio.run(run_phases(args))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
