"""Papers like these: the threshold of a set (`bot.topics.like`), calibrated when it is made.

**Calibration** (`calibrate`): the threshold is the score that only `FIRE_SHARE` (2%) of a
background sample of papers exceed, a sample of recent papers the bot stored (or the bundled
`bot/data/background_papers.jsonl.gz`, a day's worth of real papers, when few are stored),
never below `MIN_THRESHOLD`; so a like subscription fires on at most about 2% of a daily
listing, however broad its set is. When the set has at least `SELF_MIN` papers, the threshold
is also never below the score its own papers reach when each is left out of the set
(`SELF_QUANTILE` of those scores): a set whose papers are close to each other and far from
the rest of the listing then fires on fewer papers than its budget allows. That least threshold
is kept in the profile (`own_level`).

**Recalibration** (`recalibrate`, run by `bot.services.like_recalibration` as the index grows):
the same budget over a newer background, the profile and its own level unchanged; a set made
on the bundled day is recalibrated on the bot's own papers once enough are stored.

Pure, but for reading the bundled background from the package.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from importlib import resources

from bot.domain import Paper
from bot.topics.catalog import Catalog
from bot.topics.like import (
    FIRE_SHARE,
    MIN_THRESHOLD,
    LikeProfile,
    TagRates,
    build_profile,
)
from bot.topics.tag_rules import catalog_tagger
from bot.topics.text_model import Vector, paper_vector

MIN_BACKGROUND = 300  # fewer stored papers than this: calibrate on the bundled sample
BACKGROUND_PAPERS = 2000  # the newest stored papers a set is calibrated against
SELF_QUANTILE = 0.1  # the threshold is at most the score of this share of the set's own papers
SELF_MIN = 3  # a set of fewer papers has no left-out scores (the budget alone sets it)


def threshold_for(scores: Sequence[float], share: float = FIRE_SHARE) -> float:
    """The score that at most `share` of `scores` exceed (strictly), at least `MIN_THRESHOLD`."""
    if not scores:
        return MIN_THRESHOLD
    ranked = sorted(scores, reverse=True)
    allowed = math.floor(share * len(ranked))
    return max(ranked[min(allowed, len(ranked) - 1)], MIN_THRESHOLD)


def self_level(scores: Sequence[float], quantile: float = SELF_QUANTILE) -> float:
    """Just under the `quantile` of the set's own left-out `scores` (0 when there are none):
    a threshold that all but that share of the set's papers would pass."""
    if not scores:
        return 0.0
    ranked = sorted(scores)
    return math.floor((ranked[int(quantile * len(ranked))] - 1e-4) * 1e4) / 1e4


def left_out_scores(
    papers: Sequence[Paper],
    vectors: Sequence[Mapping[str, float]],
    tags: Sequence[Iterable[str]] | None,
    rates: TagRates | None,
) -> list[float]:
    """Each paper's score with the profile of the set without it (none under `SELF_MIN`)."""
    if len(papers) < SELF_MIN:
        return []
    scores = []
    for n in range(len(papers)):
        others = [i for i in range(len(papers)) if i != n]
        profile = build_profile(
            [papers[i] for i in others],
            tags=None if tags is None else [tags[i] for i in others],
            rates=rates,
            vectors=[vectors[i] for i in others],
        )
        scores.append(profile.score(vectors[n], () if tags is None else tags[n]))
    return scores


def calibrate(
    profile: LikeProfile,
    background: Iterable[tuple[Mapping[str, float], Iterable[str]]],
    share: float = FIRE_SHARE,
    own: Sequence[float] = (),
) -> LikeProfile:
    """`profile` with the threshold that fires on at most `share` of `background` (each paper
    not the set's own, as its vector and its catalog tags), and never below its own level:
    `self_level` of the set's `own` left-out scores when given, else the level the profile
    keeps (a recalibration)."""
    level = self_level(own) if own else profile.own_level
    scores = [profile.score(vector, tags) for vector, tags in background]
    threshold = max(round(threshold_for(scores, share), 4), level)
    return replace(profile, threshold=threshold, own_level=level)


Described = dict[str, tuple[Vector, frozenset[str]]]


def background_size(stored: Sequence[Paper]) -> int:
    """How many stored papers a set calibrated with `stored` was calibrated on: 0 when there
    are too few and the bundled day stands in for them."""
    return len(stored) if len(stored) >= MIN_BACKGROUND else 0


def described_background(stored: Sequence[Paper], catalog: Catalog | None) -> Described:
    """arXiv id -> vector and catalog tags of what sets are calibrated against: the `stored`
    recent papers when there are at least `MIN_BACKGROUND`, else the bundled day."""
    if not background_size(stored):
        return _bundled_tagged(catalog)
    tagger = catalog_tagger(catalog) if catalog is not None else None
    return {
        p.arxiv_id: (paper_vector(p), frozenset(tagger.tag(p)) if tagger else frozenset())
        for p in stored
    }


def _without(described: Described, own: Iterable[str]) -> list[tuple[Vector, frozenset[str]]]:
    """The background rows of `described`, a set's `own` papers left out."""
    mine = set(own)
    return [row for arxiv_id, row in described.items() if arxiv_id not in mine]


def recalibrate(profile: LikeProfile, own: Iterable[str], described: Described) -> LikeProfile:
    """`profile` (of the set of arXiv ids `own`) calibrated anew against `described`
    (`described_background`): the threshold alone changes."""
    return calibrate(profile, _without(described, own))


@cache
def bundled_background() -> tuple[Paper, ...]:
    """The bundled day of real papers (`bot/data/README.md`) calibration falls back on."""
    data = resources.files("bot.data").joinpath("background_papers.jsonl.gz").read_bytes()
    rows = [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines()]
    return tuple(
        Paper(
            str(r["arxiv_id"]),
            str(r["title"]),
            str(r["abstract"]),
            categories=tuple(str(c) for c in r.get("categories") or ()),
        )
        for r in rows
    )


@cache
def _bundled_tagged(catalog: Catalog | None) -> dict[str, tuple[Vector, frozenset[str]]]:
    """arXiv id -> vector and catalog tags of each bundled background paper (once a catalog)."""
    tagger = catalog_tagger(catalog) if catalog is not None else None
    return {
        p.arxiv_id: (paper_vector(p), frozenset(tagger.tag(p)) if tagger else frozenset())
        for p in bundled_background()
    }


def calibrated_profile(
    papers: Sequence[Paper], stored: Sequence[Paper], catalog: Catalog | None = None
) -> LikeProfile:
    """The profile of a set of `papers`, calibrated against `stored` recent papers
    (`described_background`); CPU only. With a `catalog`, the set's papers and the background
    are tagged by its tagger (the one ingest uses) and the profile has topics; without, it is
    text alone."""
    rows = _without(described_background(stored, catalog), (p.arxiv_id for p in papers))
    tagger = catalog_tagger(catalog) if catalog is not None else None
    vectors = [paper_vector(p) for p in papers]
    tags = [frozenset(tagger.tag(p)) for p in papers] if tagger else None
    rates = TagRates.of([t for _, t in rows]) if tagger else None
    names = {t.slug: t.name for t in catalog.topics} if catalog is not None else None
    profile = build_profile(papers, tags=tags, rates=rates, names=names, vectors=vectors)
    own = left_out_scores(papers, vectors, tags, rates)
    return calibrate(profile, rows, own=own)
