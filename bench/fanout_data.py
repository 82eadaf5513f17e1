"""The database bench_fanout measures on: generated chats, subscriptions, mutes and papers.

N chats (55% instant, 40% daily, 2% weekly, 3% off, 3% inactive) follow catalog topics
(Zipf-like popularity, s=1.0: a handful of topics have most followers), 5% of them mute
one popular tag (half of them for one subscription only), and old papers plus new ones
carry ~3 tags each (Zipf-like, s=0.8, ranked independently of follower counts). The same
shape and seed give the same rows. Run as `python -m bench.fanout_data --url URL ...`, this
module is the child process that migrates and fills a database (`setup`), so that its
memory does not count in the measuring process's peak.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import asdict, dataclass, fields
from datetime import UTC, date, datetime, timedelta
from itertools import accumulate
from typing import Any

from bench.harness import (
    PAPER_COLUMNS,
    TAG_COLUMNS,
    TAGS_PER_PAPER,
    load_tables,
    migrate_to_head,
    paper_row,
    tag_row,
    zipf_weights,
)
from bot.topics.catalog import load_catalog

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

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--chats", type=int, default=100_000)
        parser.add_argument("--subs-per-chat", type=int, default=3)
        parser.add_argument("--papers", type=int, default=2_000)
        parser.add_argument("--old-papers", type=int, default=20_000)
        parser.add_argument("--mute-share", type=float, default=0.05)
        parser.add_argument("--seed", type=int, default=7)

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Shape:
        return cls(**{field.name: getattr(args, field.name) for field in fields(cls)})

    def arguments(self) -> list[str]:
        """The command-line arguments `add_arguments` parses back into this shape."""
        return [f"--{name.replace('_', '-')}={value}" for name, value in asdict(self).items()]


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
    "papers": PAPER_COLUMNS,
    "paper_tags": TAG_COLUMNS,
}


def _zipf(slugs: list[str], skew: float, rng: random.Random) -> tuple[list[str], list[float]]:
    """The slugs in a random popularity order with cumulative Zipf weights."""
    order = list(slugs)
    rng.shuffle(order)
    return order, list(accumulate(zipf_weights(len(order), skew)))


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
        arxiv_id, title = f"2611.{paper_id:06d}", f"Paper {paper_id}"
        papers.append(paper_row(paper_id, arxiv_id, title, "cs.LG", day, stamp))
        k = rng.choice(TAGS_PER_PAPER)
        for slug in _distinct(rng, paper_order, paper_cum, k):
            tags.append(tag_row(paper_id, slug))
    return Data(chats, subs, mutes, papers, tags)


# --- loading it ----------------------------------------------------------------------


async def setup(url: str, shape: Shape) -> None:
    """Migrate an empty database and fill it (run in its own process: see `main`)."""
    await migrate_to_head(url)
    started = time.perf_counter()
    data = generate(shape)
    generated = time.perf_counter() - started
    await load_tables(
        url, {table: (columns, getattr(data, table)) for table, columns in COLUMNS.items()}
    )
    print(
        f"  setup: {len(data.chats):,} chats, {len(data.subscriptions):,} subscriptions,"
        f" {len(data.muted_tags):,} mutes, {len(data.papers):,} papers,"
        f" {len(data.paper_tags):,} paper tags (generated in {generated:.1f} s,"
        f" loaded in {time.perf_counter() - started - generated:.1f} s)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="bench_fanout's setup (a child process)")
    parser.add_argument("--url", required=True, help="the empty database to fill")
    Shape.add_arguments(parser)
    args = parser.parse_args()
    asyncio.run(setup(args.url, Shape.from_arguments(args)))


if __name__ == "__main__":
    main()
