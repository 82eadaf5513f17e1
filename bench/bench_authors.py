"""Followed authors: name matching on the name-pair fixture and on the dev corpus, and what
1,000 followed authors cost an ingest's tagging.

    .venv/bin/python -m bench.bench_authors

1. The fixture `tests/fixtures/authors/name_pairs.jsonl` (variants of one person, and
   near-homonyms: the same family name on another person, the same initial, pinyin
   near-spellings), from real names of the dev corpus: variants matched, false matches.
   Goal: every variant matched, 0 false matches.
2. The dev corpus (`tests/fixtures/relevance/catalog/dev.jsonl.gz`): its distinct author
   names, how many read as a followable name, and how many pairs of distinct names sharing
   a family name (families of at most 150 names) the matcher calls one person: those are
   spellings of one person or names too short to tell apart ("J. Q. You" and "Jiaxuan
   You"), never counted as errors here; `--show` prints them to read.
3. Cost: tagging the real daily listing (1,504 papers, every archive) with the bundled
   catalog alone, then with 1,000 followed authors as well (half of them authors of that
   listing, so many papers match; half from the dev corpus); name caches cleared each round,
   as for a day of new names; then the whole ingest of that listing (stored, tagged, alerts
   queued) into a fresh SQLite database where one chat follows those 1,000 authors, against
   the same with none (best of 3 alternated rounds). Goal: ingest+tag of a daily listing under 2 s.

The last line is JSON with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import time
from collections.abc import Sequence

from bench.fixtures import FIXTURES, daily_listing, json_records
from bench.harness import best_of, fresh_database
from bot.domain import ChatRef, Platform, SubscriptionKind
from bot.ports import LikeSet
from bot.services.ingest import rule_tags, store_papers
from bot.topics import authors
from bot.topics.authors import AuthorNameError, parse_author
from bot.topics.catalog import load_catalog
from storage.database import Database

PAIRS = FIXTURES / "authors" / "name_pairs.jsonl"
DEV = FIXTURES / "relevance" / "catalog" / "dev.jsonl.gz"
FOLLOWS = 1000
BIGGEST_FAMILY = 150


def fixture_figures() -> dict[str, int]:
    rows = list(json_records(PAIRS))
    found = [(row["match"], parse_author(row["followed"]).matches(row["paper"])) for row in rows]
    return {
        "pairs": len(rows),
        "variants": sum(expected for expected, _ in found),
        "variants_matched": sum(expected and got for expected, got in found),
        "near_homonyms": sum(not expected for expected, _ in found),
        "false_matches": sum(got and not expected for expected, got in found),
    }


def dev_names() -> list[str]:
    names = {
        a["name"] if isinstance(a, dict) else a for r in json_records(DEV) for a in r["authors"]
    }
    return sorted(n for n in names if n)


def corpus_figures(names: list[str], show: bool) -> dict[str, int]:
    patterns = {}
    for name in names:
        try:
            patterns[name] = parse_author(name)
        except AuthorNameError:
            continue
    families = collections.defaultdict(list)
    for name in names:
        families[name.split()[-1].lower()].append(name)
    pairs = judged_same = 0
    for group in families.values():
        if len(group) > BIGGEST_FAMILY:
            continue
        for a, b in itertools.combinations(group, 2):
            if a in patterns:
                pairs += 1
                if patterns[a].matches(b):
                    judged_same += 1
                    if show:
                        print(f"  same person? {a!r} ~ {b!r}")
    return {
        "names": len(names),
        "followable": len(patterns),
        "same_family_pairs": pairs,
        "judged_one_person": judged_same,
    }


def chosen_follows(names: list[str], listing: list) -> list[str]:
    """`FOLLOWS` canonical names: half authors of the listing, half from the dev corpus."""
    theirs = sorted({a.name for p in listing for a in p.authors})
    chosen = theirs[:: max(1, len(theirs) // (FOLLOWS // 2))][: FOLLOWS // 2]
    chosen += names[:: max(1, len(names) // FOLLOWS)][: FOLLOWS - len(chosen)]
    followed = []
    for name in chosen:
        try:
            followed.append(parse_author(name).canonical)
        except AuthorNameError:
            continue
    return followed


async def follow_all(db: Database, followed: Sequence[str], sets: Sequence[LikeSet] = ()) -> None:
    """One chat following every author of `followed` and every set of `sets`."""
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(ChatRef(Platform.CONSOLE, "1"))
        for like_set in sets:
            await uow.like_sets.save(like_set)
            tag = like_set.tag
            await uow.subscriptions.add(chat.id, SubscriptionKind.LIKE, tag, tag, tag)
        for target in followed:
            tag = parse_author(target).tag
            await uow.subscriptions.add(chat.id, SubscriptionKind.AUTHOR, target, target, tag)
        await uow.commit()


async def ingest_once(
    followed: Sequence[str], listing: list, sets: Sequence[LikeSet] = ()
) -> float:
    """Seconds to store the listing (tags and alerts) with one chat following `followed`
    authors (and `sets` of papers like these)."""
    async with fresh_database("sqlite", "pw_authors") as url:
        db = Database(url)
        await follow_all(db, followed, sets)
        authors._read_name.cache_clear()
        start = time.perf_counter()
        await store_papers(db.uow, listing, load_catalog())
        elapsed = time.perf_counter() - start
        await db.dispose()
    return elapsed


def cost_figures(names: list[str]) -> dict[str, float]:
    catalog = load_catalog()
    listing = daily_listing()
    followed = chosen_follows(names, listing)

    def tag(names: list[str]) -> list:
        authors._read_name.cache_clear()  # a day's names are new to the process
        return rule_tags(catalog, [], listing, names)

    base = best_of(3, lambda: tag([]))
    with_authors = best_of(3, lambda: tag(followed))
    matched = {a for a, key, _ in tag(followed) if key.startswith("a:")}
    rounds = [  # alternated, so that a busy machine slows both alike
        (asyncio.run(ingest_once([], listing)), asyncio.run(ingest_once(followed, listing)))
        for _ in range(3)
    ]
    ingest_base, ingest_authors = (min(times) for times in zip(*rounds, strict=True))
    return {
        "ingest_no_authors_s": round(ingest_base, 3),
        "ingest_with_authors_s": round(ingest_authors, 3),
        "listing_papers": len(listing),
        "followed_authors": len(followed),
        "papers_by_followed_authors": len(matched),
        "tag_catalog_only_s": round(base, 3),
        "tag_with_authors_s": round(with_authors, 3),
        "authors_extra_ms": round((with_authors - base) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the pairs judged one person")
    args = parser.parse_args()
    figures = {"fixture": fixture_figures()}
    print("fixture:", figures["fixture"])
    names = dev_names()
    figures["corpus"] = corpus_figures(names, args.show)
    print("dev corpus:", figures["corpus"])
    figures["cost"] = cost_figures(names)
    print("cost:", figures["cost"])
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
