"""Ingest with many followed queries, and how long the event loop is blocked meanwhile.

    .venv/bin/python -m bench.bench_queries [--queries 1000 4000] [--followers 1]

Fills a fresh SQLite database with N distinct followed queries (generated from the word
frequency table: phrases, prefixes, scopes, categories; each followed by `--followers`
chats), then stores arXiv's real 1,504-item daily RSS listing with the bundled catalog,
as `paperwatch ingest --file` does. For each N it prints the whole ingest's wall time,
the time to compile the queries (cold, then warm), the time to tag the papers, and the
longest stretch during the ingest in which the event loop ran nothing else (a ticker
coroutine measures the largest gap between its 1 ms sleeps). The last line is JSON with
every figure. Each figure is the best of `--repeat` runs (the machine may be shared).

It also times one query `/follow` through the console path with that listing stored: the
follow matches the newest stored papers (up to 2,000), and the same ticker measures how
long the loop was held meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources

from bench.fixtures import daily_listing
from bench.harness import fresh_database
from bot.adapters.console import handle_line
from bot.domain import ChatRef, Platform, SubscriptionKind
from bot.services.ingest import store_papers
from bot.topics import tag_rules as tagging
from bot.topics.catalog import load_catalog
from bot.topics.query import parse_query
from bot.topics.query_tree import QueryError
from bot.topics.tag_rules import build_tagger, query_key
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

CATEGORIES = ["cs.LG", "cs.AI", "cs.CL", "cs.CV", "cs.RO", "stat.ML", "cs.IR"]


def vocabulary() -> list[str]:
    """Words that are neither everywhere nor nowhere (share of abstracts 0.2%-60%)."""
    text = resources.files("bot.topics").joinpath("word_frequencies.tsv").read_text("utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and line[0] != "#")
    return [w for w, share in rows if 0.002 <= float(share) <= 0.6 and w.isalpha()]


def generate_queries(count: int, seed: int = 7) -> list[str]:
    """`count` distinct canonical queries of the shapes people write."""
    rng = random.Random(seed)
    words = vocabulary()
    shapes = [
        lambda: f'"{rng.choice(words)} {rng.choice(words)}" AND {rng.choice(words)}',
        lambda: f"{rng.choice(words)[:5]}* AND {rng.choice(words)}",
        lambda: f'ti:{rng.choice(words)} OR abs:"{rng.choice(words)} {rng.choice(words)}"',
        lambda: f"cat:{rng.choice(CATEGORIES)} AND ({rng.choice(words)} OR {rng.choice(words)})",
        lambda: f"{rng.choice(words)} {rng.choice(words)} NOT {rng.choice(words)}",
        lambda: f"cat:{rng.choice(CATEGORIES)} AND NOT {rng.choice(words)}",
        lambda: f"({rng.choice(words)} OR {rng.choice(words)[:4]}*) AND {rng.choice(words)}",
    ]
    found: dict[str, None] = {}
    while len(found) < count:
        try:
            found[str(parse_query(rng.choice(shapes)()))] = None
        except QueryError:
            continue
    return list(found)


async def follow_all(db: Database, queries: list[str], followers: int) -> None:
    async with db.uow() as uow:
        for n in range(followers):
            chat = await uow.chats.get_or_create(ChatRef(Platform.CONSOLE, str(n + 1)))
            for text in queries:
                key = query_key(parse_query(text))
                await uow.subscriptions.add(chat.id, SubscriptionKind.QUERY, text, text, key)
        await uow.commit()


@asynccontextmanager
async def longest_stall() -> AsyncIterator[list[float]]:
    """While the block runs, a coroutine sleeps 1 ms at a time; the list yielded gets the
    largest gap between two of its wake-ups (how long the loop ran nothing else) at the end."""
    stop, result = asyncio.Event(), []

    async def tick() -> None:
        worst, last = 0.0, time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst, last = max(worst, now - last), now
        result.append(worst)

    ticker = asyncio.create_task(tick())
    try:
        yield result
    finally:
        stop.set()
        await ticker


async def ingest(queries: list[str], followers: int, papers: list) -> dict[str, float]:
    catalog = load_catalog()
    async with fresh_database("sqlite", "pw_queries") as url:
        db = Database(url)
        await follow_all(db, queries, followers)
        compiled = getattr(tagging, "compiled_query", None)
        if compiled is not None:
            compiled.cache_clear()  # the first ingest after a start compiles everything
        async with longest_stall() as stall:
            start = time.perf_counter()
            await store_papers(db.uow, papers, catalog)
            elapsed = time.perf_counter() - start
        await db.dispose()
    return {"ingest_s": elapsed, "loop_stall_s": stall[0]}


async def follow_once(papers: list) -> dict[str, float]:
    """One query /follow with the listing stored: wall time and the longest loop stall."""
    catalog = load_catalog()
    async with fresh_database("sqlite", "pw_queries") as url:
        db = Database(url)
        await store_papers(db.uow, papers, catalog)
        ctx = Context(uow=db.uow, catalog=catalog)
        async with longest_stall() as stall:
            start = time.perf_counter()
            reply = await handle_line('/follow (model OR learning) AND NOT "xyzzy"', REGISTRY, ctx)
            elapsed = time.perf_counter() - start
        await db.dispose()
    assert reply is not None and not reply.is_error, reply
    return {"follow_s": elapsed, "follow_loop_stall_s": stall[0]}


def tagging_figures(queries: list[str], papers: list) -> dict[str, float]:
    catalog = load_catalog()
    compiled = getattr(tagging, "compiled_query", None)
    if compiled is not None:
        compiled.cache_clear()
    start = time.perf_counter()
    tagger = build_tagger(catalog, queries)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    build_tagger(catalog, queries)
    warm = time.perf_counter() - start
    start = time.perf_counter()
    for paper in papers:
        tagger.tag(paper)
    tag = time.perf_counter() - start
    return {"compile_cold_s": cold, "compile_warm_s": warm, "tag_s": tag}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--followers", type=int, default=1, help="chats following each query")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    args = parser.parse_args()
    papers = daily_listing()
    figures: dict[str, dict[str, float]] = {}
    for count in args.queries:
        queries = generate_queries(count)
        runs = [tagging_figures(queries, papers) for _ in range(args.repeat)]
        runs = [run | asyncio.run(ingest(queries, args.followers, papers)) for run in runs]
        row = {key: min(run[key] for run in runs) for key in runs[0]}
        figures[str(count)] = {k: round(v, 3) for k, v in row.items()}
        print(
            f"{count:>5} queries x {args.followers} chat(s): ingest {row['ingest_s']:.2f} s, "
            f"loop blocked at most {row['loop_stall_s'] * 1000:.0f} ms; compile "
            f"{row['compile_cold_s']:.2f} s cold / {row['compile_warm_s']:.2f} s warm; "
            f"tag {len(papers)} papers {row['tag_s']:.2f} s"
        )
    follows = [asyncio.run(follow_once(papers)) for _ in range(args.repeat)]
    follow = {key: round(min(run[key] for run in follows), 3) for key in follows[0]}
    print(
        f"one query /follow over {len(papers)} stored papers: {follow['follow_s']:.2f} s, "
        f"loop blocked at most {follow['follow_loop_stall_s'] * 1000:.0f} ms"
    )
    summary = {"papers": len(papers), "followers": args.followers, "figures": figures}
    print(json.dumps(summary | {"follow": follow}))


if __name__ == "__main__":
    main()
