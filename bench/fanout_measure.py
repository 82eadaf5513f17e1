"""What bench_fanout times and checks: one enqueue of a day's new papers, and a first claim.

It times exactly what `bot.services.ingest.store` does for new papers: `uow.outbox.enqueue_papers(
paper_ids, now)` in one transaction plus the commit, which writes one row per chat for the
batch. Which papers each chat is owed (after mutes) is worked out when a worker first claims
its row, so `SAMPLE` rows are then claimed as a worker does (nothing is sent) and timed too.
The rows written are checked against an independent, hand-written SQL count, and what the
claimed rows resolve to against a hand-written (chat, paper) query.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from bench.fanout_data import NOW, TODAY, Shape
from bench.harness import peak_rss_mb
from bot.services.deliver import Deliverer
from bot.topics.catalog import load_catalog
from storage.database import Database
from storage.uow import UnitOfWork

# The same rules as the repository, written out by hand in plain SQL. A chat gets one
# row for the batch when it is active, not "off", and follows a tag of a new paper:
EXPECTED_ROWS_SQL = """
SELECT count(*) FILTER (WHERE c.digest_mode = 'instant'),
       count(*) FILTER (WHERE c.digest_mode <> 'instant')
FROM chats AS c
WHERE c.active AND c.digest_mode <> 'off'
  AND c.id IN (SELECT s.chat_id FROM subscriptions AS s JOIN paper_tags AS pt ON pt.tag = s.tag
               WHERE pt.paper_id BETWEEN :first AND :last)
"""
# and the papers it is owed: those carrying a tag it follows, unless one of the paper's
# tags is muted by the chat for every subscription ('') or for that one.
PAIRS_SQL = """
SELECT {what}
FROM paper_tags AS pt
JOIN subscriptions AS s ON s.tag = pt.tag
JOIN chats AS c ON c.id = s.chat_id
WHERE pt.paper_id BETWEEN :first AND :last {only}
  AND c.active AND c.digest_mode <> 'off'
  AND NOT EXISTS (
      SELECT 1 FROM muted_tags AS m
      JOIN paper_tags AS other ON other.paper_id = pt.paper_id AND other.tag = m.tag
      WHERE m.chat_id = s.chat_id AND (m.scope = '' OR m.scope = s.tag)
  )
"""
ALL_PAIRS_SQL = (
    "SELECT sum(n) FROM ("
    + PAIRS_SQL.format(what="pt.paper_id, count(DISTINCT s.chat_id) AS n", only="")
    + " GROUP BY pt.paper_id) AS per_paper"
)
SAMPLE = 2_000  # rows claimed afterwards to check (and time) what a chat is owed


@dataclass(frozen=True, slots=True)
class Enqueue:
    """One timed enqueue: rows written, whether the cap cancelled it, and its clock readings."""

    written: int
    cancelled: bool
    started: float
    inserted: float
    committed: float


async def measure(
    backend: str, url: str, shape: Shape, explain: bool, cap: float
) -> dict[str, Any]:
    """Time enqueue_papers + commit, then check its rows against EXPECTED_ROWS_SQL, and
    what the first `SAMPLE` claimed rows resolve to against PAIRS_SQL."""
    db = Database(url)
    captured: list[tuple[str, Any]] = []

    def capture(_c: Any, _cur: Any, statement: str, params: Any, _ctx: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO OUTBOX"):
            captured.append((statement, params))

    event.listen(db.engine.sync_engine, "before_cursor_execute", capture)
    resolve: dict[str, Any] = {}
    try:
        async with db.uow() as uow:
            paper_ids = await _new_paper_ids(uow)
        assert paper_ids == list(shape.new_ids), "the new papers are not where setup put them"
        rss_before = peak_rss_mb()
        run = await timed_enqueue(db, backend, paper_ids, cap)
        rss_peak = peak_rss_mb()
        bounds = {"first": shape.new_ids[0], "last": shape.new_ids[-1]}
        async with db.engine.connect() as conn:
            by_kind = dict(
                (await conn.execute(text("SELECT kind, count(*) FROM outbox GROUP BY kind"))).all()
            )
            alerts, items = (await conn.execute(text(EXPECTED_ROWS_SQL), bounds)).one()
            pairs = (await conn.execute(text(ALL_PAIRS_SQL), bounds)).scalar_one()
            plan = await _explain(conn, backend, captured[-1]) if explain and captured else []
        if not run.cancelled:
            resolve = await check_resolution(db, bounds)
    finally:
        await db.dispose()
    stored = sum(by_kind.values())
    want = int(alerts) + int(items)
    return {
        "backend": backend,
        "rows": stored,
        "rowcount": run.written,
        "expected_rows": want,
        "alerts": by_kind.get("alert", 0),
        "items": by_kind.get("item", 0),
        "chat_paper_pairs": int(pairs),
        "count_ok": stored == run.written == want and by_kind.get("alert", 0) == int(alerts),
        "cancelled_at_cap": run.cancelled,
        "enqueue_s": round(run.inserted - run.started, 2),
        "commit_s": round(run.committed - run.inserted, 2),
        "total_s": round(run.committed - run.started, 2),
        "rss_before_mb": round(rss_before, 1),
        "peak_rss_mb": round(rss_peak, 1),
        **resolve,
        "plan": plan,
    }


async def _new_paper_ids(uow: UnitOfWork) -> list[int]:
    query = text("SELECT id FROM papers WHERE announced = :d ORDER BY id")
    return list((await uow.session.execute(query, {"d": TODAY})).scalars())


async def timed_enqueue(db: Database, backend: str, paper_ids: list[int], cap: float) -> Enqueue:
    """enqueue_papers + commit, timed. A run longer than `cap` seconds (0: no cap) is
    cancelled (statement_timeout on PostgreSQL, sqlite3_interrupt on SQLite) and rolled
    back: it has missed its goal."""
    written, cancelled = 0, False
    async with db.uow() as uow:
        watchdog = await _arm_cap(uow.session, backend, cap)
        started = time.perf_counter()
        try:
            written = await uow.outbox.enqueue_papers(paper_ids, NOW)
            inserted = time.perf_counter()
            await uow.commit()
        except DBAPIError:
            if not cap or time.perf_counter() - started < cap:
                raise
            cancelled = True
            inserted = time.perf_counter()
        finally:
            if watchdog is not None:
                watchdog.cancel()
        committed = time.perf_counter()
    return Enqueue(written, cancelled, started, inserted, committed)


async def check_resolution(db: Database, bounds: dict[str, int]) -> dict[str, Any]:
    """Claim `SAMPLE` alert rows as a worker would (nothing is sent) and compare the
    papers each chat is owed with PAIRS_SQL for those chats."""
    deliverer = Deliverer(db.uow, {}, load_catalog(), clock=lambda: NOW, concurrency=SAMPLE)
    started = time.perf_counter()
    claimed, _ = await deliverer._claim(SAMPLE)
    elapsed = time.perf_counter() - started
    async with db.engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT chat_id, payload FROM outbox WHERE status <> 'pending'")
        )
        owed: dict[int, set[int]] = {}
        for chat, payload in rows.all():
            data = json.loads(payload) if isinstance(payload, str) else payload
            owed[chat] = set(data["papers"])
        only = f"AND s.chat_id IN ({', '.join(str(c) for c in sorted(owed))})"
        query = PAIRS_SQL.format(what="DISTINCT s.chat_id, pt.paper_id", only=only)
        expected: dict[int, set[int]] = {chat: set() for chat in owed}
        for chat, paper in (await conn.execute(text(query), bounds)).all():
            expected[chat].add(paper)
    return {
        "sample_rows": claimed,
        "sample_pairs": sum(len(p) for p in owed.values()),
        "sample_ok": claimed == len(owed) and owed == expected,
        "claim_ms_per_row": round(elapsed * 1000 / max(claimed, 1), 3),
    }


async def _arm_cap(session: AsyncSession, backend: str, cap: float) -> asyncio.Handle | None:
    """Make the coming statement fail once it has run `cap` seconds."""
    if not cap:
        return None
    if backend == "postgres":
        await session.execute(text(f"SET LOCAL statement_timeout = {int(cap * 1000)}"))
        return None
    connection = await (await session.connection()).get_raw_connection()
    driver = connection.driver_connection  # the aiosqlite connection
    assert driver is not None
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task[None]] = []
    return loop.call_later(cap, lambda: tasks.append(loop.create_task(driver.interrupt())))


async def _explain(conn: Any, backend: str, captured: tuple[str, Any]) -> list[str]:
    """The plan of the INSERT ... SELECT that enqueue_papers sent (EXPLAIN only)."""
    statement, params = captured
    prefix = "EXPLAIN QUERY PLAN " if backend == "sqlite" else "EXPLAIN "
    rows = (await conn.exec_driver_sql(prefix + statement, tuple(params))).all()
    if backend == "sqlite":
        return [f"{row[0]:>3} {row[1]:>3} {row[3]}" for row in rows]
    return [row[0] for row in rows]
