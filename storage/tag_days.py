"""How many counted papers of each tag the index holds of each announcement day (`tag_days`).

The invariant: for every tag and day, `tag_days.papers` is the number of stored papers
announced that day, not samples (`papers.sample`), that carry the tag (`paper_tags`);
pairs without one have no row or a row of 0. Momentum's weekly counts read it instead of
joining every tag of every paper of the weeks (`storage.momentum_counts`, migration 0012),
as its coverage and share read `announced_days` (`storage.announced_days`).

It changes in the transaction that changes what it counts:
- a tag attached to a counted paper adds one to its (tag, day) (`storage.paper_tags`:
  ingest, a followed query's tags on older papers, retagging);
- a rule tag that retagging drops takes one off; retagging writes only what changes in
  the end, so a paper that keeps its tags changes no count;
- a stored paper counted on another day now (a newer version announced on another day, a
  real announcement replacing a sample) takes every tag it has from the day it was counted
  on, if any, to the day it is counted on now, if any (`PaperRepository.upsert`).
Nothing deletes papers (their tags would go with them and the counts would stay).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import date

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from storage.models import PaperRow, PaperTagRow, TagDayRow
from storage.repositories import chunks

# A count's key: (tag, announcement day).
TagDay = tuple[str, date]
# Rows per INSERT statement of counts.
_ROWS = 500


async def counted_days(session: AsyncSession, paper_ids: Iterable[int]) -> dict[int, date]:
    """The day each of `paper_ids` is counted on, for those counted (not a sample, the
    announcement date known), for a writer of their tags.

    On PostgreSQL the papers stay share-locked (in id order, as upsert updates them) until
    the transaction ends: an ingest that moves one of them to another day, or makes a
    sample real, waits for the tags written here and then moves them too, or has already
    moved it, and the day read here is the new one."""
    found: dict[int, date] = {}
    for chunk in chunks(sorted(set(paper_ids))):
        stmt = (
            select(PaperRow.id, PaperRow.announced, PaperRow.sample)
            .where(PaperRow.id.in_(chunk))
            .order_by(PaperRow.id)
            .with_for_update(read=True)
        )
        for paper_id, day, sample in (await session.execute(stmt)).all():
            if day is not None and not sample:
                found[paper_id] = day
    return found


def tally(
    pairs: Iterable[tuple[int, str]], days: Mapping[int, date], sign: int = 1
) -> Counter[TagDay]:
    """`sign` for each (paper id, tag) pair whose paper is counted (has a day in `days`)."""
    changes: Counter[TagDay] = Counter()
    for paper_id, tag in pairs:
        day = days.get(paper_id)
        if day is not None:
            changes[tag, day] += sign
    return changes


async def move_tags(
    session: AsyncSession, moves: Mapping[int, tuple[date | None, date | None]]
) -> None:
    """Move the tags of papers (by row id) from the day each was counted on to the day it
    is counted on now (None: not counted then, or not now)."""
    moving = {paper_id: move for paper_id, move in moves.items() if move[0] != move[1]}
    changes: Counter[TagDay] = Counter()
    for chunk in chunks(sorted(moving)):
        stmt = select(PaperTagRow.paper_id, PaperTagRow.tag).where(PaperTagRow.paper_id.in_(chunk))
        for paper_id, tag in (await session.execute(stmt)).all():
            was, now = moving[paper_id]
            if was is not None:
                changes[tag, was] -= 1
            if now is not None:
                changes[tag, now] += 1
    await count_tags(session, changes)


async def count_tags(session: AsyncSession, changes: Mapping[TagDay, int]) -> None:
    """Add `changes` to the counts, creating the rows not seen before; changes of 0 are
    left out, and rows go in (tag, day) order, so that concurrent writers lock the rows
    they share in the same order."""
    rows = [{"tag": tag, "day": day, "papers": n} for (tag, day), n in sorted(changes.items()) if n]
    if not rows:
        return
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(TagDayRow)
    stmt = stmt.on_conflict_do_update(
        index_elements=[TagDayRow.tag, TagDayRow.day],
        set_={"papers": TagDayRow.papers + stmt.excluded.papers},
    )
    for chunk in chunks(rows, _ROWS):
        await session.execute(stmt, list(chunk))
