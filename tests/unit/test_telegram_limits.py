"""Telegram's flood limits, on a virtual clock: every send time is checked, no sleeping."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
from collections import defaultdict
from typing import Any

import pytest
from telegram.error import RetryAfter

from bot.adapters.telegram.limits import TelegramRateLimiter


class VirtualTime:
    """A discrete-event clock: sleepers wake in time order, and time jumps to the next one
    only when every task that can run has run."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + max(0.0, seconds), next(self._order), future))
        await future

    async def run(self, coroutine: Any) -> Any:
        task = asyncio.ensure_future(coroutine)
        while not task.done():
            for _ in range(20):
                await asyncio.sleep(0)
            if self._sleepers and not task.done():
                wake, _, future = heapq.heappop(self._sleepers)
                self.now = max(self.now, wake)
                future.set_result(None)
        return task.result()


async def send_all(
    limiter: TelegramRateLimiter, time: VirtualTime, chats: list[int], per_chat: int
):
    sent: dict[int, list[float]] = defaultdict(list)
    await time.run(sends(limiter, time, chats, per_chat, sent))
    return sent


async def sends(
    limiter: TelegramRateLimiter,
    time: VirtualTime,
    chats: list[int],
    per_chat: int,
    sent: dict[int, list[float]],
) -> None:
    """Send `per_chat` messages to each chat at once, noting when each left in `sent`."""

    async def one(chat_id: int) -> None:
        async def callback() -> bool:
            sent[chat_id].append(time.now)
            return True

        await limiter.process_request(callback, (), {}, "sendMessage", {"chat_id": chat_id}, None)

    await asyncio.gather(*(one(chat) for chat in chats for _ in range(per_chat)))


def windows_ok(times: list[float], size: int, window: float) -> bool:
    """No more than `size` sends in any `window` seconds."""
    times = sorted(times)
    return all(times[i + size] - times[i] >= window for i in range(len(times) - size))


async def test_private_chats_stay_under_every_limit() -> None:
    time = VirtualTime()
    limiter = TelegramRateLimiter(clock=time.clock, sleep=time.sleep)
    sent = await send_all(limiter, time, list(range(1, 61)), 5)
    every = [t for times in sent.values() for t in times]
    assert len(every) == 300
    assert windows_ok(every, 30, 1.0)  # at most 30 in any second
    for times in sent.values():
        assert all(b - a >= 1.0 for a, b in zip(sorted(times), sorted(times)[1:], strict=False))
    # And it is not slower than it needs to be: 300 messages at ~30/s.
    assert max(every) < 300 / 30 * 1.05


async def test_a_share_of_the_rate_keeps_several_processes_under_the_overall_limit() -> None:
    # Three processes sending for one bot at once, each with its own limiter and chats.
    time = VirtualTime()
    limiters = [TelegramRateLimiter(clock=time.clock, sleep=time.sleep) for _ in range(3)]
    for limiter in limiters:
        limiter.share(10)  # a third of 30 messages/s
    sent: dict[int, list[float]] = defaultdict(list)
    runs = [
        sends(limiter, time, list(range(100 * n, 100 * n + 40)), 3, sent)
        for n, limiter in enumerate(limiters)
    ]
    await time.run(asyncio.gather(*runs))
    every = [t for times in sent.values() for t in times]
    assert len(every) == 360
    assert windows_ok(every, 30, 1.0)  # at most 30 in any second, all three together
    assert max(every) < 360 / 30 * 1.15  # and each keeps close to its third of the rate
    limiters[0].share(30)  # the others stopped: the whole rate again
    alone = await send_all(limiters[0], time, list(range(1000, 1060)), 1)
    times = sorted(t for each in alone.values() for t in each)
    assert times[-1] - times[0] < 60 / 30 * 1.1


async def test_shared_rates_leave_room_for_jitter_between_the_processes() -> None:
    # Two workers' sends reach Telegram up to 60 ms later than they left, each by its own
    # delay: Telegram counts arrivals, and must still never see more than 30 in a second.
    time = VirtualTime()
    limiters = [TelegramRateLimiter(clock=time.clock, sleep=time.sleep) for _ in range(2)]
    for limiter in limiters:
        limiter.share(15)
    sent: dict[int, list[float]] = defaultdict(list)
    runs = [
        sends(limiter, time, list(range(100 * n, 100 * n + 60)), 4, sent)
        for n, limiter in enumerate(limiters)
    ]
    await time.run(asyncio.gather(*runs))
    jitter = random.Random(7)
    arrivals = [t + jitter.uniform(0.0, 0.06) for times in sent.values() for t in times]
    assert len(arrivals) == 480
    assert windows_ok(arrivals, 30, 1.0)


async def test_a_share_that_is_not_a_whole_number_a_second_is_kept_in_full() -> None:
    time = VirtualTime()
    limiter = TelegramRateLimiter(clock=time.clock, sleep=time.sleep)
    limiter.share(7.5)
    sent = await send_all(limiter, time, list(range(1, 61)), 1)
    every = sorted(t for times in sent.values() for t in times)
    assert all(b - a >= 1 / 7.5 for a, b in itertools.pairwise(every))
    assert every[-1] < 59 / 7.5 * 1.15  # not 7 a second (a share keeps 10% in hand)


async def test_groups_keep_twenty_a_minute() -> None:
    time = VirtualTime()
    limiter = TelegramRateLimiter(clock=time.clock, sleep=time.sleep)
    sent = await send_all(limiter, time, [-100, -200], 25)
    for times in sent.values():
        assert len(times) == 25 and windows_ok(times, 20, 60.0)


async def test_retry_after_holds_only_that_chat() -> None:
    time = VirtualTime()
    limiter = TelegramRateLimiter(clock=time.clock, sleep=time.sleep)
    attempts: list[float] = []

    async def flaky() -> bool:
        attempts.append(time.now)
        if len(attempts) == 1:
            raise RetryAfter(7)
        return True

    request = limiter.process_request(flaky, (), {}, "sendMessage", {"chat_id": 5}, None)
    assert await time.run(request)
    assert attempts[1] - attempts[0] >= 7.0


async def test_gives_up_after_the_retries() -> None:
    time = VirtualTime()
    limiter = TelegramRateLimiter(clock=time.clock, sleep=time.sleep, max_retries=2)

    async def always() -> bool:
        raise RetryAfter(1)

    with pytest.raises(RetryAfter):
        await time.run(limiter.process_request(always, (), {}, "sendMessage", {"chat_id": 5}, None))


async def test_requests_without_a_chat_pass_freely() -> None:
    time = VirtualTime()
    limiter = TelegramRateLimiter(clock=time.clock, sleep=time.sleep)

    async def callback() -> bool:
        return True

    for _ in range(100):
        await limiter.process_request(callback, (), {}, "getUpdates", {}, None)
    assert time.now == 0.0


async def test_a_send_that_wakes_late_does_not_let_the_next_ones_bunch() -> None:
    time = VirtualTime()
    late = {"once": True}

    async def oversleeping(seconds: float) -> None:
        # One wake-up comes 0.4 s late, as when the event loop is busy elsewhere.
        extra = 0.4 if late["once"] and time.now > 2.0 and seconds > 0 else 0.0
        if extra:
            late["once"] = False
        await time.sleep(seconds + extra)

    limiter = TelegramRateLimiter(clock=time.clock, sleep=oversleeping)
    sent = await send_all(limiter, time, list(range(1, 201)), 1)
    every = [t for times in sent.values() for t in times]
    assert not late["once"]  # the late wake-up did happen
    assert windows_ok(every, 30, 1.0)
    assert max(every) < 200 / 30 * 1.05 + 0.4
