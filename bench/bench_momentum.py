"""Momentum for every topic over a million papers, on SQLite and PostgreSQL.

    .venv/bin/python -m bench.bench_momentum [--papers N] [--repeat R] [--skip-postgres]

Generates N papers (default 1,000,000) over 30 weeks of weekday listings, ~3 catalog
tags each (Zipf-like topic popularity, three topics rising in the last month, 1% with
no announcement date), bulk-inserts them into a temporary SQLite file and a fresh
PostgreSQL database (dropped afterwards), then times `MomentumRepository.for_tags(None,
...)`: the momentum of every tag at once. Goals: <= 2 s on PostgreSQL, <= 5 s on
SQLite. The last line is JSON with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from itertools import accumulate

from bench.harness import (
    PAPER_COLUMNS,
    TAG_COLUMNS,
    TAGS_PER_PAPER,
    Rows,
    fresh_database,
    load_tables,
    paper_row,
    tag_row,
    verdict,
    zipf_weights,
)
from bot.topics.catalog import load_catalog
from bot.topics.spike_rule import is_spike
from storage.database import Database
from storage.momentum_counts import MomentumRepository

AS_OF = date(2026, 11, 27)  # a Friday
WEEKS = 30
GOALS = {"postgresql": 2.0, "sqlite": 5.0}
STAMP = datetime(2026, 11, 27, 12, tzinfo=UTC)  # when the papers were stored


def generate(n: int, seed: int = 7) -> tuple[list[date | None], list[tuple[int, str]], list[str]]:
    """Announcement dates (index = paper id - 1) and (paper id, tag) pairs."""
    rng = random.Random(seed)
    slugs = [t.slug for t in load_catalog().topics]
    rng.shuffle(slugs)
    weights = zipf_weights(len(slugs), 0.9)
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
        k = rng.choice(TAGS_PER_PAPER)
        for tag in set(rng.choices(slugs, cum_weights=cum, k=k)):
            pairs.append((paper_id, tag))
    return announced, pairs, rising


def tables(announced: list[date | None], pairs: list[tuple[int, str]]) -> dict[str, Rows]:
    """The generated papers and their tags as rows of `papers` and `paper_tags`, and the
    papers of each day and of each tag and day as rows of `announced_days` and
    `tag_days`, which ingest keeps beside them (none of the generated papers is a
    sample)."""
    papers = (
        paper_row(paper_id, f"b{paper_id}", "t", None, day, STAMP)
        for paper_id, day in enumerate(announced, 1)
    )
    tags = (tag_row(paper_id, tag) for paper_id, tag in pairs)
    days = sorted(Counter(day for day in announced if day is not None).items())
    tag_days = Counter(
        (tag, day) for paper_id, tag in pairs if (day := announced[paper_id - 1]) is not None
    )
    return {
        "papers": (PAPER_COLUMNS, papers),
        "paper_tags": (TAG_COLUMNS, tags),
        "announced_days": (("day", "papers"), days),
        "tag_days": (("tag", "day", "papers"), ((*key, n) for key, n in sorted(tag_days.items()))),
    }


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


async def bench_backend(
    backend: str,
    announced: list[date | None],
    pairs: list[tuple[int, str]],
    repeat: int,
    rising: list[str],
) -> dict[str, object]:
    """Load the papers into a fresh database ("sqlite" or "postgres"), then time momentum."""
    async with fresh_database(backend, "pw_momentum") as url:
        start = time.perf_counter()
        await load_tables(url, tables(announced, pairs))
        load_s = time.perf_counter() - start
        db = Database(url)
        try:
            figures = await time_momentum(db, repeat, rising)
        finally:
            await db.dispose()
    return {"load_s": round(load_s, 1), **figures}


def report(name: str, figures: dict[str, object]) -> None:
    goal = GOALS[name]
    ok = verdict(float(figures["all_tags_s"]) <= goal)  # type: ignore[arg-type]
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
    out["sqlite"] = asyncio.run(bench_backend("sqlite", announced, pairs, args.repeat, rising))
    report("sqlite", out["sqlite"])  # type: ignore[arg-type]
    if not args.skip_postgres:
        figures = bench_backend("postgres", announced, pairs, args.repeat, rising)
        out["postgresql"] = asyncio.run(figures)
        report("postgresql", out["postgresql"])  # type: ignore[arg-type]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
