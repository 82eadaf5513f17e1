"""Phase B of bench_delivery: the bot's own cost per message, with no ceiling.

The fake's limits are off and the bot's are set to 10^6. The fake runs in a child process
(`FakeProcess`; this module, run as `python -m bench.delivery_cost`, is that child) on the
other core, so this process's CPU time is the bot's alone: event loop, SQLite's thread, PTB,
aiohttp. Each round starts afresh; the figures are the rounds' medians, because a shared
machine's speed drifts by a third from one minute to the next.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from typing import Any

from bench.delivery_run import deliver
from bench.harness import start_module, verdict
from tests.support.telegram_server import serve_fake_telegram

GOAL_MS = 2.0


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
        self._child = start_module(
            "bench.delivery_cost",  # this module, as the child (see main)
            f"--cores={cores}",
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
    ops: bool = False,
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
            ops=ops,
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
                args.fast_chats,
                args.fast_per_chat,
                args.give_up_after,
                profile,
                args.fake_cores,
                args.ops,
            )
        )
    bot_ms = statistics.median(r["bot_ms_per_message"] for r in rounds)
    return {
        "chats": args.fast_chats,
        "ops": args.ops,
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
    met = verdict(f["bot_ms_per_message"] <= GOAL_MS)
    done = "" if f["complete"] else f" (INCOMPLETE: {f['sent']} of {f['messages']} sent)"
    each = [r["bot_ms_per_message"] for r in f["rounds"]]
    print(
        f"phase B: {len(each)} rounds of {f['rounds'][0]['messages']} alerts to {f['chats']}"
        f" chats, no flood limits{done}"
    )
    print(
        f"  bot's own cost:       {f['bot_ms_per_message']:.3f} ms of CPU per message (median;"
        f" rounds {', '.join(f'{ms:.3f}' for ms in each)})"
        f" = {f['bot_messages_per_s']:.0f} messages/s, goal <= {GOAL_MS:g} ms: {met}"
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


def main() -> None:
    parser = argparse.ArgumentParser(description="the fake Bot API of phase B (a child process)")
    parser.add_argument("--cores", default="", help="the cores it may use, as 0,1")
    fake_server(parser.parse_args().cores)


if __name__ == "__main__":
    main()
