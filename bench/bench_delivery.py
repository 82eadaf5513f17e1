"""Outbox delivery through the real Telegram messenger against the fake Bot API server.

    .venv/bin/python -m bench.bench_delivery [--phase all|a|b|c]
        [--chats 60] [--per-chat 10] [--groups 10] [--per-group 22]
        [--fast-chats 200] [--fast-per-chat 10] [--rounds 3] [--profile] [--ops] [--workers 2]

Alerts are queued on a fresh SQLite file (instant chats following one topic, new papers
stored with `bot.services.ingest.store`), then a `Deliverer` drains them through a
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
messages/s per process). With `--ops` the ops endpoint (`bot.ops`) serves the
deliverer's metrics meanwhile, and a scraper in another process reads /metrics,
/healthz and /readyz every second: its cost to the bot is the difference.

Phase C (several processes): `--workers` `paperwatch run --role worker` processes on
one fresh PostgreSQL database (`PAPERWATCH_TEST_POSTGRES_URL`, skipped when it cannot
be reached) deliver A1's alerts under the same fake limits, sharing the overall rate
and the chats (`bot.services.peers`). Reported as A1, plus messages sent twice (goal
0). The workers and the fake share the machine's cores; this process stops keeping
to one core first.

Its parts: bench/delivery_run.py queues and drains (every phase), delivery_flood.py holds
phases A and C, delivery_cost.py phase B; bench/harness.py what they share with the other
benches. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import logging
import os
from typing import Any

from bench.delivery_cost import phase_b, print_profile, report_b, split_cores
from bench.delivery_flood import phase_a, phase_c, report_a


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
    parser.add_argument(
        "--ops",
        action="store_true",
        help="B: serve the ops endpoint, scraped every second by another process",
    )
    parser.add_argument("--verbose", action="store_true", help="show the bot's log")
    args = parser.parse_args()
    args.all_cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    bot_cores, args.fake_cores = split_cores()
    if bot_cores:
        os.sched_setaffinity(0, bot_cores)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR)
    results = asyncio.run(run_phases(args))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
