"""Delivery across real processes: a worker killed with SIGKILL (anywhere, and while it
holds a chat's claim), and two workers sharing the outbox on PostgreSQL. Every message
is counted at the fake Telegram server."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bot.domain import ChatKind, ChatRef, Paper, Platform, SubscriptionKind
from bot.services.ingest import store
from bot.topics.catalog import load_catalog
from storage.database import Database
from tests.conftest import require_postgres
from tests.support.postgres import create_database, drop_database, registered_processes
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

TOKEN = "123456:TEST-token"


async def queue_alerts(url: str, chats: int, papers: int) -> None:
    """`chats` Telegram chats follow one topic and `papers` new papers arrive on it."""
    db = Database(url)
    await db.upgrade()
    catalog = load_catalog()
    async with db.uow() as uow:
        for n in range(chats):
            chat = await uow.chats.get_or_create(
                ChatRef(Platform.TELEGRAM, str(1000 + n)), ChatKind.PRIVATE
            )
            await uow.chats.update(chat.id, digest_mode="instant")
            await uow.subscriptions.add(
                chat.id,
                SubscriptionKind.TOPIC,
                "rl-for-llm-agents",
                "RL for LLM Agents",
                "rl-for-llm-agents",
            )
        batch = [
            Paper(
                arxiv_id=f"2611.{i:05d}",
                title=f"Paper {i}",
                abstract="We propose a thing.",
                categories=("cs.LG",),
                announced=date(2026, 11, 2),
                tags=("RL for LLM Agents",),
            )
            for i in range(papers)
        ]
        await store(uow, batch, catalog, datetime.now(UTC))
        await uow.commit()
        counts = await uow.outbox.counts()
    await db.dispose()
    assert counts == {"pending": chats}  # one row per chat holds all of its alerts


def start_worker(url: str, fake: FakeTelegram, cwd: Path, **extra: str) -> subprocess.Popen[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PAPERWATCH_", "ARXIV_", "TELEGRAM_"))
    }
    env.update(
        {
            "PAPERWATCH_DATABASE_URL": url,
            "PAPERWATCH_LOG_LEVEL": "WARNING",
            "PAPERWATCH_DELIVER_INTERVAL": "0.2",
            "PAPERWATCH_DELIVERY_LEASE": "3",
            "PAPERWATCH_HEARTBEAT_INTERVAL": "0.5",
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_API_BASE_URL": fake.base_url,
            **extra,
        }
    )
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "run", "--role", "worker"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def delivered(fake: FakeTelegram) -> Counter[tuple[int, str]]:
    found = ((m.chat_id, re.search(r"Paper \d+", m.visible_text)) for m in fake.sent)
    return Counter((chat, match.group()) for chat, match in found if match)


def stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return stderr


def test_a_worker_killed_mid_delivery_loses_nothing(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'pw.db'}"
    chats, papers = 20, 3
    asyncio.run(queue_alerts(url, chats, papers))
    with serve_fake_telegram() as fake:
        first = start_worker(url, fake, tmp_path)
        fake.wait_until(lambda f: len(f.sent) >= 15, seconds=60)
        first.kill()  # SIGKILL: no chance to mark anything
        first.wait()
        sent_before_kill = len(fake.sent)
        second = start_worker(url, fake, tmp_path)
        try:
            fake.wait_until(lambda f: len(delivered(f)) == chats * papers, seconds=60)
        finally:
            stderr = stop(second)
    counts = delivered(fake)
    assert len(counts) == chats * papers, stderr  # nothing lost
    duplicates = sum(n - 1 for n in counts.values())
    # Only what was in flight when the worker died can be sent twice: at most one
    # message per chat is ever in flight.
    assert duplicates <= chats, (duplicates, sent_before_kill)
    # The only refusals are requests the killed process never finished writing.
    assert all(r.params == {} for r in fake.rejected), fake.rejected


class HoldingTelegram(FakeTelegram):
    """Holds the second message to one chat without answering, until `release` is set,
    and then answers it with an error: the worker that sent it holds that chat's claim
    meanwhile, and when it is killed, the message was never delivered."""

    def __init__(self, chat_id: int) -> None:
        super().__init__()
        self.held_chat = chat_id
        self.holding = threading.Event()
        self.release = threading.Event()

    def dispatch(
        self, token: str | None, method: str, params: dict, files: dict
    ) -> tuple[int, dict]:
        if (
            method.lower() == "sendmessage"
            and params.get("chat_id") == self.held_chat
            and len(self.messages_for(self.held_chat)) == 1
            and not self.release.is_set()
        ):
            self.holding.set()
            self.release.wait(60)
            return 502, {"ok": False, "error_code": 502, "description": "Bad Gateway"}
        return super().dispatch(token, method, params, files)


def test_a_worker_killed_while_holding_a_claim_is_taken_over_within_30_s(tmp_path: Path) -> None:
    """SIGKILL right after a chat's first alert, while the worker holds the chat's claim
    (its second alert is in flight): a worker started afterwards sends the rest of the
    batch within 30 s, long before the 120 s lease ends, and nothing twice."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'pw.db'}"
    chats, papers = 4, 6
    held = 1000 + 2
    asyncio.run(queue_alerts(url, chats, papers))
    settings = {"PAPERWATCH_DELIVERY_LEASE": "120", "PAPERWATCH_HEARTBEAT_INTERVAL": "1"}
    fake = HoldingTelegram(held).start()
    try:
        first = start_worker(url, fake, tmp_path, **settings)
        try:
            assert fake.holding.wait(60), "the held chat's second alert never came"
        finally:
            first.kill()  # SIGKILL while the chat's claim is held
            first.wait()
            fake.release.set()
        assert len(fake.messages_for(held)) == 1
        second = start_worker(url, fake, tmp_path, **settings)
        restarted = time.monotonic()
        try:
            fake.wait_until(lambda f: len(delivered(f)) == chats * papers, seconds=30)
            took = time.monotonic() - restarted
            time.sleep(1.0)  # anything extra would show up now
        finally:
            stderr = stop(second)
    finally:
        fake.stop()
    counts = delivered(fake)
    assert len(counts) == chats * papers, stderr  # nothing lost
    per_chat = Counter(chat for (chat, _), n in counts.items() for _ in range(n - 1))
    # Nothing twice but what was in flight when the worker died: one message a chat.
    assert all(n <= 1 for n in per_chat.values()), counts
    print(f"the rest of the batch arrived {took:.1f} s after the restart")


@pytest.fixture
def postgres_database() -> Iterator[str]:
    require_postgres()
    url = asyncio.run(create_database("pw_workers"))
    try:
        yield url
    finally:
        asyncio.run(drop_database(url))


@pytest.mark.postgres
def test_two_workers_share_5000_alerts_without_duplicates(
    postgres_database: str, tmp_path: Path
) -> None:
    chats, papers = 500, 10
    asyncio.run(queue_alerts(postgres_database, chats, papers))
    fast = {
        "TELEGRAM_MESSAGES_PER_SECOND": "100000",
        "TELEGRAM_CHAT_MESSAGES_PER_SECOND": "100000",
        "TELEGRAM_GROUP_MESSAGES_PER_MINUTE": "100000",
        "PAPERWATCH_DELIVERY_LEASE": "120",
        # Not taken for dead (and re-sent) when a busy machine stalls a worker for a second.
        "PAPERWATCH_HEARTBEAT_INTERVAL": "2",
    }
    with serve_fake_telegram() as fake:
        workers = [start_worker(postgres_database, fake, tmp_path, **fast) for _ in range(2)]
        started = time.monotonic()
        try:
            fake.wait_until(lambda f: len(f.sent) >= chats * papers, seconds=240)
            time.sleep(1.0)  # anything extra would show up now
        finally:
            errors = [stop(w) for w in workers]
        elapsed = time.monotonic() - started
    counts = delivered(fake)
    assert len(counts) == chats * papers, errors
    assert max(counts.values()) == 1, "a message was delivered twice"
    assert len(fake.sent) == chats * papers
    print(f"5,000 alerts by two workers in {elapsed:.1f} s")


@pytest.mark.postgres
def test_two_workers_keep_telegrams_flood_limits_together(
    postgres_database: str, tmp_path: Path
) -> None:
    """Each keeps half of the overall rate and its own half of the chats, so the fake,
    enforcing Telegram's limits, never has to answer 429."""
    chats, papers = 60, 4
    with serve_fake_telegram() as fake:
        fake.rate_limit(per_chat_per_second=1.0, global_per_second=30.0, group_per_minute=20)
        # A lease and heartbeats long enough that a worker stalled by a busy machine is
        # not taken for dead (its claims released and re-sent): this test is about the
        # flood limits, not about recovery.
        calm = {"PAPERWATCH_DELIVERY_LEASE": "30", "PAPERWATCH_HEARTBEAT_INTERVAL": "1"}
        workers = [start_worker(postgres_database, fake, tmp_path, **calm) for _ in range(2)]
        try:
            deadline = time.monotonic() + 60
            while asyncio.run(registered_processes(postgres_database)) < 2:
                assert time.monotonic() < deadline, "the workers did not register"
                time.sleep(0.2)
            time.sleep(3.0)  # three heartbeats: each has seen the other
            status = subprocess.run(
                [sys.executable, "-m", "bot", "status"],
                cwd=tmp_path,
                env={**os.environ, "PAPERWATCH_DATABASE_URL": postgres_database},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert "Processes running: 2 (2 worker)." in status.stdout, status.stderr
            asyncio.run(queue_alerts(postgres_database, chats, papers))
            started = time.monotonic()
            fake.wait_until(lambda f: len(f.sent) >= chats * papers, seconds=120)
            elapsed = time.monotonic() - started
            time.sleep(1.0)  # anything extra would show up now
        finally:
            errors = [stop(w) for w in workers]
    counts = delivered(fake)
    assert len(counts) == chats * papers, errors
    assert max(counts.values()) == 1, "a message was delivered twice"
    assert fake.too_many_requests == 0, [r.params for r in fake.rejected][:5]
    print(f"{chats * papers} alerts by two workers in {elapsed:.1f} s, no 429")
