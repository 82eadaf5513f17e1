"""Parse and ingest speed on arXiv's real 1,504-item daily RSS feed.

    .venv/bin/python -m bench.bench_ingest [--repeat N]

Prints items/s for our parser and for feedparser on the same bytes, their ratio, and
the wall time to parse + store all items into a fresh SQLite database (one process,
one core); the last line is JSON with every figure. Goals: ratio >= 3, ingest < 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import feedparser

from bench.fixtures import DAILY_FEED
from bench.harness import best_of, fresh_database
from bot.arxiv.parse import parse_feed
from bot.services.ingest import store_papers
from storage.database import Database


async def ingest_once(data: bytes) -> tuple[float, int]:
    async with fresh_database("sqlite", "pw_ingest", migrate=False) as url:
        db = Database(url)
        await db.upgrade()  # through this engine, so that the timed part finds it connected
        start = time.perf_counter()
        feed = parse_feed(data)
        result = await store_papers(db.uow, feed.papers)
        elapsed = time.perf_counter() - start
        await db.dispose()
    return elapsed, result.total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = DAILY_FEED.read_bytes()
    items = len(parse_feed(data).papers)
    ours = best_of(args.repeat, lambda: parse_feed(data))
    theirs = best_of(max(1, args.repeat // 2), lambda: feedparser.parse(data))
    ingest = [asyncio.run(ingest_once(data)) for _ in range(args.repeat)]
    ingest_s = statistics.median(t for t, _ in ingest)
    figures = {
        "items": items,
        "ours_items_per_s": round(items / ours),
        "feedparser_items_per_s": round(items / theirs),
        "ratio": round(theirs / ours, 2),
        "ingest_sqlite_s": round(ingest_s, 3),
        "stored": ingest[0][1],
    }
    print(f"items in feed:              {items}")
    ours_rate, their_rate = figures["ours_items_per_s"], figures["feedparser_items_per_s"]
    print(f"our parser:                 {ours_rate:,} items/s ({ours * 1000:.0f} ms)")
    print(f"feedparser {feedparser.__version__:<16}{their_rate:,} items/s ({theirs * 1000:.0f} ms)")
    print(f"ratio (goal >= 3):          {figures['ratio']}x")
    print(f"parse + store into SQLite:  {ingest_s:.3f} s (goal < 2 s), median of {args.repeat}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
