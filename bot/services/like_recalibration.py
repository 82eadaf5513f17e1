"""Keeping "papers like these" sets at their budget as the index grows and drifts.

A set's threshold is calibrated when the set is first followed (`handlers.like_follows`) so
that it fires on at most about 2% of a listing (`bot.topics.like_calibration`). On a new
deployment that calibration uses the bundled day of papers, and months later the listing the
bot stores is no longer the one a set was calibrated on; either way a set can drift from its
budget. So after each poll the poller recalibrates the followed sets that are due
(`is_due`): those calibrated on the bundled day, as soon as `MIN_BACKGROUND` papers are
stored, and any other `RECALIBRATE_AFTER` after its last calibration. Only the threshold
changes; papers already tagged keep their tags. The scoring runs in a thread, off the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bot.domain import Paper
from bot.ports import LikeSet, UnitOfWork
from bot.topics.catalog import Catalog
from bot.topics.like import LikeProfile
from bot.topics.like_calibration import (
    BACKGROUND_PAPERS,
    MIN_BACKGROUND,
    background_size,
    described_background,
    recalibrate,
)

log = logging.getLogger(__name__)

RECALIBRATE_AFTER = timedelta(days=7)
#: Sets recalibrated per poll at most, the longest-waiting first; the rest wait for the next
#: poll. Describing 2,000 background papers once took 2.8 s and each set 44 ms more (measured
#: on the dev split, two loaded cores): about 12 s in a thread for a full batch.
PER_POLL = 200


def is_due(like_set: LikeSet, now: datetime) -> bool:
    """Whether `like_set` should be calibrated again at `now` (module docstring)."""
    if like_set.calibrated_on < MIN_BACKGROUND or like_set.calibrated_at is None:
        return True
    return now - like_set.calibrated_at >= RECALIBRATE_AFTER


def _recalibrated(
    sets: Sequence[LikeSet], recent: Sequence[Paper], catalog: Catalog | None
) -> list[tuple[LikeSet, float]]:
    """Each readable set of `sets` and its threshold against `recent`; CPU only."""
    described = described_background(recent, catalog)
    found = []
    for like_set in sets:
        try:
            profile = LikeProfile.from_json(like_set.profile, like_set.threshold)
        except (ValueError, KeyError, TypeError):
            continue  # unreadable: it matches nothing at ingest either
        found.append((like_set, recalibrate(profile, like_set.arxiv_ids, described).threshold))
    return found


async def recalibrate_due(
    uow_factory: Callable[[], UnitOfWork], catalog: Catalog | None, now: datetime
) -> int:
    """Recalibrate the followed sets due at `now`; how many were recalibrated (0 while
    fewer than `MIN_BACKGROUND` papers are stored)."""
    async with uow_factory() as uow:
        due = [s for s in await uow.like_sets.followed() if is_due(s, now)]
        if not due:
            return 0
        recent = await uow.papers.latest(None, limit=BACKGROUND_PAPERS)
    on = background_size(recent)
    if not on:
        return 0
    oldest = lambda s: (s.calibrated_on >= MIN_BACKGROUND, s.calibrated_at or now)  # noqa: E731
    chosen = sorted(due, key=oldest)[:PER_POLL]
    thresholds = await asyncio.to_thread(_recalibrated, chosen, recent, catalog)
    async with uow_factory() as uow:
        for like_set, threshold in thresholds:
            await uow.like_sets.recalibrated(like_set.tag, threshold, now, on)
        await uow.commit()
    for like_set, threshold in thresholds:
        log.info(
            "like set recalibrated tag=%s papers=%d threshold %.4f -> %.4f",
            like_set.tag,
            on,
            like_set.threshold,
            threshold,
        )
    return len(thresholds)
