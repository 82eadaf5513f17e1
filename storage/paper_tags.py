"""Writing the topic tags of stored papers, and what that does to the per-day tag counts.

`PaperRepository` (`storage.papers`) attaches and replaces tags through these; each
returns the changes its rows make to `tag_days` (`storage.tag_days`), which the caller
writes once, in the same transaction, when it is done.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from storage.models import PaperRow, PaperTagRow
from storage.repositories import chunks
from storage.tag_days import TagDay, counted_days, tally

# Tag rows per INSERT statement (and per stretch of work on the event loop).
_TAG_ROWS = 300
# (arXiv id, tag, why it matched): a tag to attach.
Triple = tuple[str, str, Sequence[str]]


async def paper_ids(session: AsyncSession, arxiv_ids: Iterable[str]) -> dict[str, int]:
    """The row ids of those of `arxiv_ids` the index holds."""
    found: dict[str, int] = {}
    for chunk in chunks(list(arxiv_ids)):
        stmt = select(PaperRow.arxiv_id, PaperRow.id).where(PaperRow.arxiv_id.in_(chunk))
        found.update({a: i for a, i in (await session.execute(stmt)).all()})
    return found


async def attach(
    session: AsyncSession, triples: Sequence[Triple], source: str
) -> tuple[int, Counter[TagDay]]:
    """Attach (arxiv_id, tag, why) triples of stored papers; existing (paper, tag) pairs
    are kept. How many were attached, and what they add to the per-day tag counts.

    Rows are built and inserted `_TAG_ROWS` at a time, so that a big batch (an ingest
    with thousands of followed queries makes 100,000 tags) never holds the event loop
    for long between two statements."""
    ids = await paper_ids(session, {a for a, _, _ in triples})
    have: set[tuple[int, str]] = set()
    for chunk in chunks(list(ids.values())):
        stmt = select(PaperTagRow.paper_id, PaperTagRow.tag).where(PaperTagRow.paper_id.in_(chunk))
        have.update((p, t) for p, t in (await session.execute(stmt)).all())
    days = await counted_days(session, ids.values())
    changes: Counter[TagDay] = Counter()
    rows: list[dict[str, Any]] = []
    added = 0
    for arxiv_id, tag, why in triples:
        if arxiv_id not in ids:
            continue
        key = (ids[arxiv_id], tag)
        if key not in have:
            have.add(key)
            rows.append({"paper_id": key[0], "tag": tag, "source": source, "why": list(why)})
        if len(rows) == _TAG_ROWS:
            changes.update(await _insert(session, rows, days))
            added, rows = added + len(rows), []
    if rows:
        changes.update(await _insert(session, rows, days))
    return added + len(rows), changes


async def _insert(
    session: AsyncSession, rows: list[dict[str, Any]], days: dict[int, Any]
) -> Counter[TagDay]:
    await session.execute(PaperTagRow.__table__.insert(), rows)
    return tally(((row["paper_id"], row["tag"]) for row in rows), days)


async def drop_rule_tags(session: AsyncSession, ids: Sequence[int]) -> Counter[TagDay]:
    """Delete the rule-made tags of these papers (by row id); what that takes off the
    per-day tag counts (negative changes)."""
    table = PaperTagRow.__table__
    days = await counted_days(session, ids)
    changes: Counter[TagDay] = Counter()
    for chunk in chunks(list(ids)):
        stmt = (
            delete(table)
            .where(table.c.paper_id.in_(chunk), table.c.source == "rule")
            .returning(table.c.paper_id, table.c.tag)
        )
        dropped = (await session.execute(stmt)).all()
        changes.update(tally(((paper_id, tag) for paper_id, tag in dropped), days, -1))
    return changes
