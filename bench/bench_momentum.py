"""Momentum for every topic over a million papers, on SQLite and PostgreSQL.

    .venv/bin/python -m bench.bench_momentum [--papers N] [--repeat R] [--skip-postgres]

Generates N papers (default 1,000,000) over 30 weeks of weekday listings, ~3 catalog
tags each (Zipf-like topic popularity, three topics rising in the last month, 1% with
no announcement date), bulk-inserts them into a temporary SQLite file and a fresh
PostgreSQL schema (dropped afterwards), then times `MomentumRepository.for_tags(None,
...)`: the momentum of every tag at once. Goals: <= 2 s on PostgreSQL, <= 5 s on
SQLite. The last line is JSON with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import tempfile
import time
import uuid
from datetime import date, timedelta
from itertools import accumulate
from pathlib import Path

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bot.topics.catalog import load_catalog
from bot.topics.momentum import is_spike
from storage.database import Database
from storage.momentum import MomentumRepository
from tests.support.postgres import PG_URL

AS_OF = date(2026, 11, 27)  # a Friday
WEEKS = 30
GOALS = {"postgresql": 2.0, "sqlite": 5.0}


def generate(n: int, seed: int = 7) -> tuple[list[date | None], list[tuple[int, str]], list[str]]:
    """Announcement dates (index = paper id - 1) and (paper id, tag) pairs."""
    rng = random.Random(seed)
    slugs = [t.slug for t in load_catalog().topics]
    rng.shuffle(slugs)
    weights = [1.0 / (rank + 1) ** 0.9 for rank in range(len(slugs))]
    rising = slugs[20:23]  # mid-popularity topics that take off in the last month
    days = [
        AS_OF - timedelta(days=d)
        for d in range(7 * WEEKS)
        if (AS_OF - timedelta(days=d)).weekday() < 5
    ]
    boosted = list(weights)
    for slug in rising:
        boosted[slugs.index(slug)] *= 3.0
    plain_cum = list(accumulate(weights))
    boost_cum = list(accumulate(boosted))
    start_boost = AS_OF - timedelta(days=27)
    announced: list[date | None] = []
    pairs: list[tuple[int, str]] = []
    for paper_id in range(1, n + 1):
        day = rng.choice(days)
        announced.append(None if rng.random() < 0.01 else day)
        cum = boost_cum if day >= start_boost else plain_cum
        k = rng.choice((1, 2, 2, 3, 3, 3, 4, 4, 5))
        for tag in set(rng.choices(slugs, cum_weights=cum, k=k)):
            pairs.append((paper_id, tag))
    return announced, pairs, rising


def load_sqlite(path: Path, announced: list[date | None], pairs: list[tuple[int, str]]) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous=OFF")
    stamp = "2026-11-27 12:00:00.000000"
    with conn:
        conn.executemany(
            "INSERT INTO papers (id, arxiv_id, version, title, abstract, authors, categories,"
            " announced, ingested_at, updated_at) VALUES (?, ?, 1, 't', '', '[]', '[]', ?, ?, ?)",
            (
                (i, f"b{i}", d.isoformat() if d else None, stamp, stamp)
                for i, d in enumerate(announced, 1)
            ),
        )
        conn.executemany(
            "INSERT INTO paper_tags (paper_id, tag, source, why) VALUES (?, ?, 'rule', '[]')",
            pairs,
        )
    conn.close()


async def load_postgres(
    schema: str, announced: list[date | None], pairs: list[tuple[int, str]]
) -> None:
    conn = await asyncpg.connect(
        PG_URL.replace("+asyncpg", ""), server_settings={"search_path": schema}
    )
    try:
        batch = 100_000
        for start in range(0, len(announced), batch):
            chunk = announced[start : start + batch]
            await conn.execute(
                "INSERT INTO papers (id, arxiv_id, version, title, abstract, authors, categories,"
                " announced, ingested_at, updated_at) SELECT i, 'b' || i, 1, 't', '', '[]'::json,"
                " '[]'::json, a, now(), now() FROM unnest($1::int[], $2::date[]) AS u(i, a)",
                list(range(start + 1, start + len(chunk) + 1)),
                chunk,
            )
        for start in range(0, len(pairs), batch):
            chunk = pairs[start : start + batch]
            await conn.execute(
                "INSERT INTO paper_tags (paper_id, tag, source, why) SELECT p, t, 'rule',"
                " '[]'::json FROM unnest($1::int[], $2::text[]) AS u(p, t)",
                [p for p, _ in chunk],
                [t for _, t in chunk],
            )
        await conn.execute("VACUUM ANALYZE papers")
        await conn.execute("VACUUM ANALYZE paper_tags")
    finally:
        await conn.close()


async def time_momentum(db: Database, repeat: int, rising: list[str]) -> dict[str, object]:
    slugs = [t.slug for t in load_catalog().topics]
    times, one_tag = [], []
    result = {}
    for _ in range(repeat):
        async with db.uow() as uow:
            repo = MomentumRepository(uow.session)
            start = time.perf_counter()
            result = await repo.for_tags(None, AS_OF, weeks=26)
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
            await repo.for_tag(slugs[0], AS_OF)
            one_tag.append(time.perf_counter() - start)
    fired = sorted(tag for tag, m in result.items() if is_spike(m))
    return {
        "all_tags_s": round(min(times), 3),
        "all_tags_first_s": round(times[0], 3),
        "one_tag_s": round(min(one_tag), 4),
        "tags": len(result),
        "spikes": fired,
        "rising_found": sorted(set(rising) & set(fired)),
    }


async def bench_sqlite(announced, pairs, repeat: int, rising: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        db = Database(f"sqlite+aiosqlite:///{path}")
        await db.upgrade()
        await db.dispose()
        start = time.perf_counter()
        load_sqlite(path, announced, pairs)
        load_s = time.perf_counter() - start
        db = Database(f"sqlite+aiosqlite:///{path}")
        try:
            figures = await time_momentum(db, repeat, rising)
        finally:
            await db.dispose()
    return {"load_s": round(load_s, 1), **figures}


async def bench_postgres(announced, pairs, repeat: int, rising: list[str]) -> dict[str, object]:
    schema = f"bench_momentum_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(PG_URL)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        options = {"connect_args": {"server_settings": {"search_path": schema}}}
        db = Database(PG_URL, **options)
        try:
            await db.upgrade()
            start = time.perf_counter()
            await load_postgres(schema, announced, pairs)
            load_s = time.perf_counter() - start
            figures = await time_momentum(db, repeat, rising)
        finally:
            await db.dispose()
    finally:
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()
    return {"load_s": round(load_s, 1), **figures}


def report(name: str, figures: dict[str, object]) -> None:
    goal = GOALS[name]
    ok = "ok" if float(figures["all_tags_s"]) <= goal else "MISSED"  # type: ignore[arg-type]
    print(
        f"{name:>10}: every tag ({figures['tags']}) in {figures['all_tags_s']} s "
        f"(first run {figures['all_tags_first_s']} s; goal <= {goal} s: {ok}); "
        f"one tag {figures['one_tag_s']} s; bulk load {figures['load_s']} s; "
        f"spikes {figures['spikes']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    announced, pairs, rising = generate(args.papers)
    print(
        f"generated {len(announced):,} papers, {len(pairs):,} tags "
        f"in {time.perf_counter() - start:.1f} s; rising on purpose: {rising}"
    )
    out: dict[str, object] = {"papers": len(announced), "tags": len(pairs)}
    out["sqlite"] = asyncio.run(bench_sqlite(announced, pairs, args.repeat, rising))
    report("sqlite", out["sqlite"])  # type: ignore[arg-type]
    if not args.skip_postgres:
        out["postgresql"] = asyncio.run(bench_postgres(announced, pairs, args.repeat, rising))
        report("postgresql", out["postgresql"])  # type: ignore[arg-type]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
