"""Outbox fan-out of one day's new papers to 100,000 chats, on SQLite and PostgreSQL.

    .venv/bin/python -m bench.bench_fanout [--backend both|sqlite|postgres] [--explain]
        [--cap SECONDS] [--chats 100000] [--subs-per-chat 3] [--papers 2000]
        [--old-papers 20000] [--seed 7]

Builds a database of N chats (default 100,000; 55% instant, 40% daily, 2% weekly, 3% off,
3% inactive) following 3 catalog topics each (Zipf-like popularity, s=1.0: a handful of
topics have most followers), 5% of chats muting one popular tag (half of them for one
subscription only), and `--old-papers` earlier papers plus `--papers` new ones (default
2,000) carrying ~3 tags each (Zipf-like, s=0.8, ranked independently of follower counts).
Setup uses bulk inserts and is not measured. Then it times exactly what `bot.ingest.store`
does for new papers: `uow.outbox.enqueue_papers(paper_ids, now)` in one transaction plus
the commit. That writes one row per chat for the batch; which papers each chat is owed
(after mutes) is worked out when a worker first claims its row, so the benchmark then
claims 2,000 rows the way a worker does (nothing is sent) and times that too.

Each backend runs in a fresh subprocess (`--backend sqlite|postgres`; the default `both`
runs the two one after the other), and the setup runs in a process of its own, so the
peak RSS reported (`ru_maxrss`) is that of the measured phase (plus the imports). The
rows written are checked against an independent, hand-written SQL count, and the
papers the claimed rows resolve to against a hand-written (chat, paper) query. Goals: <= 30 s
on SQLite, <= 15 s on PostgreSQL, peak RSS <= 300 MB. A run is cancelled (and rolled
back) at twice its goal so that the script ends in about 2.5 minutes whatever happens;
`--cap 0` waits it out. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.delivery.worker import Deliverer
from bot.topics.catalog import load_catalog
from storage.database import Database
from tests.support.postgres import create_database, drop_database

ROOT = Path(__file__).resolve().parents[1]
GOALS_S = {"sqlite": 30.0, "postgres": 15.0}
GOAL_RSS_MB = 300.0
NOW = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
TODAY = date(2026, 11, 30)
# digest_mode shares of the chats.
MODES = (("instant", 0.55), ("daily", 0.40), ("weekly", 0.02), ("off", 0.03))
INACTIVE_SHARE = 0.03
SUB_SKEW = 1.0  # Zipf exponent of topic popularity among followers
PAPER_SKEW = 0.8  # Zipf exponent of topic frequency among papers


@dataclass(frozen=True, slots=True)
class Shape:
    """The size and mix of the generated database."""

    chats: int
    subs_per_chat: int
    papers: int
    old_papers: int
    mute_share: float
    seed: int

    @property
    def new_ids(self) -> range:
        """Database ids of the new papers (old papers come first)."""
        return range(self.old_papers + 1, self.old_papers + self.papers + 1)


# --- generating the data -------------------------------------------------------------


@dataclass(slots=True)
class Data:
    """Rows of every table, as tuples in the column order of `COLUMNS`."""

    chats: list[tuple[Any, ...]]
    subscriptions: list[tuple[Any, ...]]
    muted_tags: list[tuple[Any, ...]]
    papers: list[tuple[Any, ...]]
    paper_tags: list[tuple[Any, ...]]


COLUMNS = {
    "chats": (
        "id",
        "platform",
        "external_id",
        "kind",
        "timezone",
        "digest_mode",
        "digest_time",
        "digest_weekday",
        "paused",
        "active",
        "momentum_alerts",
        "next_digest_at",
        "created_at",
        "updated_at",
    ),
    "subscriptions": ("id", "chat_id", "kind", "target", "tag", "label", "created_at"),
    "muted_tags": ("id", "chat_id", "tag", "scope", "created_at"),
    "papers": (
        "id",
        "arxiv_id",
        "version",
        "title",
        "abstract",
        "authors",
        "categories",
        "primary_category",
        "announced",
        "ingested_at",
        "updated_at",
    ),
    "paper_tags": ("paper_id", "tag", "source", "why"),
}


def _zipf(slugs: list[str], skew: float, rng: random.Random) -> tuple[list[str], list[float]]:
    """The slugs in a random popularity order with cumulative Zipf weights."""
    order = list(slugs)
    rng.shuffle(order)
    return order, list(accumulate(1.0 / (rank + 1) ** skew for rank in range(len(order))))


def _distinct(rng: random.Random, slugs: list[str], cum: list[float], k: int) -> list[str]:
    picked: list[str] = []
    while len(picked) < k:
        slug = rng.choices(slugs, cum_weights=cum)[0]
        if slug not in picked:
            picked.append(slug)
    return picked


def generate(shape: Shape) -> Data:
    """Deterministic rows for `shape` (same seed, same database)."""
    rng = random.Random(shape.seed)
    catalog = load_catalog()
    names = {t.slug: t.name for t in catalog.topics}
    slugs = sorted(names)
    sub_order, sub_cum = _zipf(slugs, SUB_SKEW, rng)
    paper_order, paper_cum = _zipf(slugs, PAPER_SKEW, rng)
    mode_names = [m for m, _ in MODES]
    mode_cum = list(accumulate(w for _, w in MODES))
    next_digest = datetime.combine(TODAY + timedelta(days=1), datetime.min.time(), UTC)
    next_digest += timedelta(hours=8)
    created = NOW - timedelta(days=90)

    chats, subs, mutes = [], [], []
    for chat_id in range(1, shape.chats + 1):
        mode = rng.choices(mode_names, cum_weights=mode_cum)[0]
        active = rng.random() >= INACTIVE_SHARE
        due = next_digest if mode in ("daily", "weekly") else None
        identity = (chat_id, "telegram", 10_000_000 + chat_id, "private", "UTC")
        chats.append((*identity, mode, "08:00", 0, False, active, True, due, created, created))
        followed = _distinct(rng, sub_order, sub_cum, shape.subs_per_chat)
        for slug in followed:
            subs.append((len(subs) + 1, chat_id, "topic", slug, slug, names[slug], created))
        if rng.random() < shape.mute_share:
            # People mute what floods them: a tag that is frequent on papers.
            tag = rng.choices(paper_order[:20], cum_weights=paper_cum[:20])[0]
            scope = rng.choice(followed) if rng.random() < 0.5 else ""
            mutes.append((len(mutes) + 1, chat_id, tag, scope, created))

    papers, tags = [], []
    for paper_id in range(1, shape.old_papers + shape.papers + 1):
        new = paper_id in shape.new_ids
        day = TODAY if new else TODAY - timedelta(days=1 + paper_id % 60)
        stamp = NOW if new else created
        head = (paper_id, f"2611.{paper_id:06d}", 1, f"Paper {paper_id}", "", "[]")
        papers.append((*head, '["cs.LG"]', "cs.LG", day, stamp, stamp))
        k = rng.choice((1, 2, 2, 3, 3, 3, 4, 4, 5))  # ~3 tags a paper
        for slug in _distinct(rng, paper_order, paper_cum, k):
            tags.append((paper_id, slug, "rule", "[]"))
    return Data(chats, subs, mutes, papers, tags)


# --- loading it ----------------------------------------------------------------------


def load_sqlite(path: str, data: Data) -> None:
    """Bulk insert with the stdlib driver, in SQLAlchemy's storage formats."""

    def plain(value: Any) -> Any:
        if isinstance(value, datetime):
            return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")
        if isinstance(value, date):
            return value.isoformat()
        return value

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    with conn:
        for table, columns in COLUMNS.items():
            rows = getattr(data, table)
            marks = ", ".join("?" * len(columns))
            conn.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                ([plain(v) for v in row] for row in rows),
            )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


async def load_postgres(url: str, data: Data) -> None:
    """COPY every table, then VACUUM ANALYZE as autovacuum would have by now."""
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        for table, columns in COLUMNS.items():
            await conn.copy_records_to_table(
                table, records=getattr(data, table), columns=list(columns)
            )
        for table in COLUMNS:
            # ids were given explicitly: move the sequences past them
            if "id" in COLUMNS[table]:
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" (SELECT max(id) FROM {table}))"
                )
            await conn.execute(f"VACUUM ANALYZE {table}")
        await conn.execute("VACUUM ANALYZE outbox")
    finally:
        await conn.close()


async def setup(backend: str, url: str, shape: Shape) -> None:
    """Migrate an empty database and fill it (run in its own process)."""
    db = Database(url)
    await db.upgrade()
    await db.dispose()
    started = time.perf_counter()
    data = generate(shape)
    generated = time.perf_counter() - started
    if backend == "sqlite":
        load_sqlite(url.split("///", 1)[1], data)
    else:
        await load_postgres(url, data)
    print(
        f"  setup: {len(data.chats):,} chats, {len(data.subscriptions):,} subscriptions,"
        f" {len(data.muted_tags):,} mutes, {len(data.papers):,} papers,"
        f" {len(data.paper_tags):,} paper tags (generated in {generated:.1f} s,"
        f" loaded in {time.perf_counter() - started - generated:.1f} s)",
        flush=True,
    )


# --- measuring -----------------------------------------------------------------------

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


def peak_rss_mb() -> float:
    """This process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def measure(
    backend: str, url: str, shape: Shape, explain: bool, cap: float
) -> dict[str, Any]:
    """Time enqueue_papers + commit, then check its rows against EXPECTED_ROWS_SQL, and
    what the first `SAMPLE` claimed rows resolve to against PAIRS_SQL.

    A run longer than `cap` seconds (0: no cap) is cancelled (statement_timeout on
    PostgreSQL, sqlite3_interrupt on SQLite) and rolled back: it has missed its goal.
    """
    db = Database(url)
    captured: list[tuple[str, Any]] = []

    def capture(_c: Any, _cur: Any, statement: str, params: Any, _ctx: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO OUTBOX"):
            captured.append((statement, params))

    event.listen(db.engine.sync_engine, "before_cursor_execute", capture)
    cancelled = False
    written = 0
    resolve: dict[str, Any] = {}
    try:
        async with db.uow() as uow:
            found = (
                await uow.session.execute(
                    text("SELECT id FROM papers WHERE announced = :d ORDER BY id"), {"d": TODAY}
                )
            ).scalars()
            paper_ids = list(found)
        assert paper_ids == list(shape.new_ids), "the new papers are not where setup put them"
        rss_before = peak_rss_mb()
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
        rss_peak = peak_rss_mb()
        bounds = {"first": shape.new_ids[0], "last": shape.new_ids[-1]}
        async with db.engine.connect() as conn:
            by_kind = dict(
                (await conn.execute(text("SELECT kind, count(*) FROM outbox GROUP BY kind"))).all()
            )
            alerts, items = (await conn.execute(text(EXPECTED_ROWS_SQL), bounds)).one()
            pairs = (await conn.execute(text(ALL_PAIRS_SQL), bounds)).scalar_one()
            plan = await _explain(conn, backend, captured[-1]) if explain and captured else []
        if not cancelled:
            resolve = await check_resolution(db, bounds)
    finally:
        await db.dispose()
    stored = sum(by_kind.values())
    want = int(alerts) + int(items)
    ok = stored == written == want and by_kind.get("alert", 0) == int(alerts)
    return {
        "backend": backend,
        "rows": stored,
        "rowcount": written,
        "expected_rows": want,
        "alerts": by_kind.get("alert", 0),
        "items": by_kind.get("item", 0),
        "chat_paper_pairs": int(pairs),
        "count_ok": ok,
        "cancelled_at_cap": cancelled,
        "enqueue_s": round(inserted - started, 2),
        "commit_s": round(committed - inserted, 2),
        "total_s": round(committed - started, 2),
        "rss_before_mb": round(rss_before, 1),
        "peak_rss_mb": round(rss_peak, 1),
        **resolve,
        "plan": plan,
    }


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


# --- processes -----------------------------------------------------------------------


def shape_args(shape: Shape) -> list[str]:
    return [f"--{name.replace('_', '-')}={value}" for name, value in asdict(shape).items()]


def run_backend(backend: str, shape: Shape, explain: bool, cap: float) -> dict[str, Any]:
    """This process measures; a child process builds the database first."""
    with tempfile.TemporaryDirectory(prefix="pw-fanout-") as folder:
        if backend == "sqlite":
            url = f"sqlite+aiosqlite:///{folder}/fanout.db"
        else:
            url = asyncio.run(create_database("pw_fanout"))
        try:
            command = [
                sys.executable,
                "-m",
                "bench.bench_fanout",
                f"--backend={backend}",
                "--role=setup",
            ]
            subprocess.run([*command, f"--url={url}", *shape_args(shape)], check=True, cwd=ROOT)
            figures = asyncio.run(measure(backend, url, shape, explain, cap))
        finally:
            if backend != "sqlite":
                asyncio.run(drop_database(url))
    return figures


def report(f: dict[str, Any]) -> None:
    goal = GOALS_S[f["backend"]]
    verdict = "ok" if f["total_s"] <= goal and not f["cancelled_at_cap"] else "MISSED"
    rss = "ok" if f["peak_rss_mb"] <= GOAL_RSS_MB else "MISSED"
    check = "matches" if f["count_ok"] else "DOES NOT MATCH"
    if f["cancelled_at_cap"]:
        check = "what the cancelled run would have written"
    print(
        f"  outbox rows written:  {f['rows']:,} ({f['alerts']:,} alert rows,"
        f" {f['items']:,} digest item rows), one per chat for the batch"
    )
    print(f"  independent SQL count: {f['expected_rows']:,} ({check})")
    print(
        f"  owed (chat, paper):   {f['chat_paper_pairs']:,}, resolved when a row is first claimed"
    )
    if f["cancelled_at_cap"]:
        print(
            f"  enqueue + commit:     > {f['enqueue_s']:.0f} s: cancelled at the cap and rolled"
            f" back (--cap 0 to wait it out), goal <= {goal:.0f} s: MISSED"
        )
    else:
        print(
            f"  enqueue + commit:     {f['total_s']:.2f} s (insert {f['enqueue_s']:.2f} s,"
            f" commit {f['commit_s']:.2f} s), goal <= {goal:.0f} s: {verdict}"
        )
    print(
        f"  peak RSS:             {f['peak_rss_mb']:.0f} MB (before the enqueue"
        f" {f['rss_before_mb']:.0f} MB), goal <= {GOAL_RSS_MB:.0f} MB: {rss}"
    )
    if "sample_rows" in f:
        same = "match PAIRS_SQL" if f["sample_ok"] else "DO NOT MATCH PAIRS_SQL"
        print(
            f"  first claim:          {f['sample_rows']:,} rows resolved to"
            f" {f['sample_pairs']:,} (chat, paper) pairs that {same};"
            f" {f['claim_ms_per_row']:.3f} ms a row"
        )
    for line in f["plan"]:
        print(f"    | {line if len(line) <= 160 else line[:157] + '...'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", choices=("both", "sqlite", "postgres"), default="both")
    parser.add_argument("--role", choices=("measure", "setup"), default="measure")
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--chats", type=int, default=100_000)
    parser.add_argument("--subs-per-chat", type=int, default=3)
    parser.add_argument("--papers", type=int, default=2_000)
    parser.add_argument("--old-papers", type=int, default=20_000)
    parser.add_argument("--mute-share", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--explain", action="store_true", help="print the INSERT's query plan")
    parser.add_argument(
        "--cap",
        type=float,
        help="cancel a run after this many seconds (default: twice the goal; 0: never)",
    )
    args = parser.parse_args()
    shape = Shape(
        args.chats, args.subs_per_chat, args.papers, args.old_papers, args.mute_share, args.seed
    )
    if args.role == "setup":
        asyncio.run(setup(args.backend, args.url, shape))
        return
    if args.backend != "both":
        print(f"{args.backend}:", flush=True)
        cap = 2 * GOALS_S[args.backend] if args.cap is None else args.cap
        figures = run_backend(args.backend, shape, args.explain, cap)
        report(figures)
        print(json.dumps({k: v for k, v in figures.items() if k != "plan"}), flush=True)
        return
    results: dict[str, Any] = {"shape": asdict(shape)}
    for backend in ("sqlite", "postgres"):
        command = [
            sys.executable,
            "-m",
            "bench.bench_fanout",
            f"--backend={backend}",
            *shape_args(shape),
        ]
        if args.explain:
            command.append("--explain")
        if args.cap is not None:
            command.append(f"--cap={args.cap}")
        done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        lines = done.stdout.rstrip().splitlines()
        print("\n".join(lines[:-1]), flush=True)
        results[backend] = json.loads(lines[-1])
    ok = all(
        results[b]["count_ok"]
        and results[b].get("sample_ok", False)
        and not results[b]["cancelled_at_cap"]
        and results[b]["total_s"] <= GOALS_S[b]
        and results[b]["peak_rss_mb"] <= GOAL_RSS_MB
        for b in ("sqlite", "postgres")
    )
    results["goals_met"] = ok
    print(f"all goals met: {'yes' if ok else 'NO'}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
