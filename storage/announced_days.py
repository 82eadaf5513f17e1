"""How many counted papers the index holds of each announcement day (`announced_days`).

The invariant: for every day, `announced_days.papers` is the number of stored papers
announced that day that are not samples (`papers.sample`); days without one have no row
or a row of 0. Momentum's coverage and share of all new papers read it instead of walking
every paper of the weeks they compare (`storage.momentum_counts`, migration 0011).

`PaperRepository.upsert` keeps it in the transaction that stores the papers: each new
counted paper adds one to its day; a stored paper that changes (a newer version with
another announcement date, a real announcement replacing a sample) leaves the day it was
counted on, if any, and joins the day it is counted on now, if any. A repeated paper
changes nothing, so re-ingesting a day leaves its count as it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import Paper
from storage.models import AnnouncedDayRow

# What upsert knew of a stored paper before changing it: (sample flag, announcement date).
Counted = tuple[bool, date | None]


def day_moves(
    updated: Sequence[Paper], before: Mapping[str, Counted], *, sample: bool
) -> dict[str, tuple[date | None, date | None]]:
    """For each refreshed paper, by arXiv id: the day it was counted on and the day it
    is counted on now (None: not counted, a sample or no date). `before` holds each
    paper's stored state; `sample` and `Paper.is_sample` say the papers are samples, as
    in `PaperRepository.upsert`, where a sample never replaces a real paper and a
    refresh without an announcement date keeps the stored one."""
    moves: dict[str, tuple[date | None, date | None]] = {}
    for paper in updated:
        was_sample, was_day = before[paper.arxiv_id]
        day = paper.announced if paper.announced is not None else was_day
        counted = None if sample or paper.is_sample else day
        moves[paper.arxiv_id] = (None if was_sample else was_day, counted)
    return moves


def day_changes(
    new: Sequence[Paper],
    updated: Sequence[Paper],
    before: Mapping[str, Counted],
    *,
    sample: bool,
) -> dict[date, int]:
    """What storing `new` and refreshing `updated` does to each day's count (days that
    do not change left out); `before` and `sample` as for `day_moves`."""
    changes: Counter[date] = Counter()
    for paper in new:
        if paper.announced is not None and not (sample or paper.is_sample):
            changes[paper.announced] += 1
    for was, now in day_moves(updated, before, sample=sample).values():
        if was is not None:
            changes[was] -= 1
        if now is not None:
            changes[now] += 1
    return {day: n for day, n in changes.items() if n}


async def count_days(session: AsyncSession, changes: Mapping[date, int]) -> None:
    """Add `changes` to the days' counts, creating the rows of days not seen before (in
    day order, so that concurrent ingests lock the rows they share in the same order)."""
    if not changes:
        return
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(AnnouncedDayRow)
    stmt = stmt.on_conflict_do_update(
        index_elements=[AnnouncedDayRow.day],
        set_={"papers": AnnouncedDayRow.papers + stmt.excluded.papers},
    )
    rows = [{"day": day, "papers": n} for day, n in sorted(changes.items())]
    await session.execute(stmt, rows)
