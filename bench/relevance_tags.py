"""Whether tags can be read and muted: how many a paper gets, and against curated tags.

- Tags per paper on a real daily listing (the 2024-11-28 RSS feed through the bot's own
  parser, and one day of the catalog's dev split): median and 95th percentile, and the
  share of the listing each topic is attached to. The goal is a median of at most 5 and
  no topic on more than 15% of a listing unless it is a top-level field topic (one
  without a parent in the catalog).
- Agreement with the seed page's curated tags: micro precision, recall and F1 of our
  tags other than the flagship against the page's, over all our tags (not only those
  the page uses). The page shows a few tags and "+N" for N more it does not show; up to
  N of our extra tags on that paper count as those hidden ones (true positives), and the
  hidden tags we cannot have matched count as misses. The flagship, when hidden, is one
  of the N (every seed paper carries it). The same agreement is also measured for the
  alert's tag line (bot/topics/tagline.py, the flagship followed): what a reader is shown.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from bench.fixtures import daily_listing, json_records
from bench.relevance_catalog import CATALOG_DIR
from bench.relevance_flagship import FLAGSHIP, Scores, load_seed_page
from bot.domain import Paper
from bot.services.ingest import paper_from_json
from bot.topics.catalog import Catalog
from bot.topics.tagger import Tagger
from bot.topics.tagline import tag_line

DEV_DAY = ("2026-06-30", "dw-dengwei_daily-arXiv-ai-enhanced")  # the dev split's largest day
MAX_SHARE = 0.15


def dev_day_papers(day: tuple[str, str] = DEV_DAY, root: Path = CATALOG_DIR) -> list[Paper]:
    """One announcement day of one source of the dev split (a day's listing as it came)."""
    rows = json_records(root / "dev.jsonl.gz")
    return [paper_from_json(r) for r in rows if (r["date"], r["source"]) == day]


def percentile(values: list[int], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def listing_figures(papers: list[Paper], tagger: Tagger, catalog: Catalog) -> dict[str, object]:
    """Tags per paper and the topics attached to more than 15% of the listing."""
    counts, per_topic = [], Counter()
    for paper in papers:
        keys = [k for k in tagger.tag(paper) if catalog.by_slug(k) is not None]
        counts.append(len(keys))
        per_topic.update(keys)
    wide = {
        slug: {
            "share": round(n / len(papers), 4),
            "top_level": catalog.by_slug(slug).parent is None,
        }
        for slug, n in per_topic.most_common()
        if n / len(papers) > MAX_SHARE
    }
    return {
        "papers": len(papers),
        "median_tags": statistics.median(counts) if counts else 0,
        "p95_tags": round(percentile(counts, 0.95), 2) if counts else 0,
        "max_tags": max(counts, default=0),
        "top_shares": {slug: round(n / len(papers), 4) for slug, n in per_topic.most_common(10)},
        "over_15_percent": wide,
        "over_15_percent_not_top_level": sorted(s for s, w in wide.items() if not w["top_level"]),
    }


def curated_agreement(
    pages: Iterable[tuple[frozenset[str], frozenset[str], int]], flagship: str
) -> Scores:
    """Micro scores of (our tag names, shown tags, hidden count) against the page, minus
    the flagship; see the module docstring for how "+N" counts."""
    tp = fp = fn = 0
    for ours, shown, hidden in pages:
        hidden -= flagship not in shown  # a hidden flagship is one of the N
        ours, shown = ours - {flagship}, shown - {flagship}
        extra = len(ours - shown)
        room = min(max(hidden, 0), extra)
        tp += len(ours & shown) + room
        fp += extra - room
        fn += len(shown - ours) + max(hidden, 0) - room
    return Scores(tp, fp, fn)


def seed_agreement(tagger: Tagger, catalog: Catalog) -> dict[str, object]:
    names = {topic.slug: topic.name for topic in catalog.topics}
    pages, lines = [], []
    for paper, shown, hidden in load_seed_page():
        tags = [k for k in tagger.tag(paper) if k in names]
        pages.append((frozenset(names[k] for k in tags), shown, hidden))
        line = tag_line(catalog, tags, [FLAGSHIP]).shown
        lines.append((frozenset(names[k] for k in line), shown, hidden))
    scores = curated_agreement(pages, names[FLAGSHIP])
    ours = [len(p[0]) for p in pages]
    return scores.as_dict() | {
        "median_tags": statistics.median(ours),
        "papers": len(pages),
        "tag_line": curated_agreement(lines, names[FLAGSHIP]).as_dict(),
    }


def measure_tags(catalog: Catalog, tagger: Tagger) -> dict[str, object]:
    return {
        "listing_rss_2024_11_28": listing_figures(daily_listing(), tagger, catalog),
        f"listing_dev_{DEV_DAY[0]}": listing_figures(dev_day_papers(), tagger, catalog),
        "seed_curated_tags": seed_agreement(tagger, catalog),
    }
