"""The paper index: papers by version-free arXiv id, and their topic tags.

Like every repository: takes a session, speaks domain objects, never commits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import Author, Paper
from bot.ports import UpsertResult
from storage.announced_days import count_days, day_changes, day_moves
from storage.models import BatchRow, PaperRow, PaperTagRow, utcnow
from storage.paper_tags import attach, drop_rule_tags, paper_ids
from storage.repositories import chunks
from storage.search_index import index_new_papers, note_new_papers
from storage.tag_days import count_tags, move_tags


def _paper_values(paper: Paper) -> dict[str, Any]:
    return {
        "arxiv_id": paper.arxiv_id,
        "version": paper.version,
        "title": paper.title,
        "abstract": paper.abstract,
        "authors": [{"name": a.name, "affiliations": list(a.affiliations)} for a in paper.authors],
        "categories": list(paper.categories),
        "primary_category": paper.primary_category,
        "announced": paper.announced,
        "submitted": paper.submitted,
        "updated": paper.updated,
        "doi": paper.doi,
        "journal_ref": paper.journal_ref,
        "comment": paper.comment,
    }


# A stored paper as upsert sees it: (row id, version, sample flag, announcement date).
_Stored = tuple[int, int, bool, date | None]


def _latest_versions(papers: Iterable[Paper]) -> dict[str, Paper]:
    """The highest version of each paper in a batch, by version-free arXiv id."""
    latest: dict[str, Paper] = {}
    for paper in papers:
        seen = latest.get(paper.arxiv_id)
        if seen is None or paper.version > seen.version:
            latest[paper.arxiv_id] = paper
    return latest


def _sort_upserts(
    latest: dict[str, Paper], existing: dict[str, _Stored], *, sample: bool
) -> tuple[list[Paper], list[Paper], list[str]]:
    """(new, updated, unchanged ids): a sample paper never overwrites a real one; a real
    one replaces a stored sample, and a newer version replaces an older one."""
    new, updated, unchanged = [], [], []
    for arxiv_id, paper in latest.items():
        stored, flag = existing.get(arxiv_id), sample or paper.is_sample
        if stored is None:
            new.append(paper)
        elif flag and not stored[2]:
            unchanged.append(arxiv_id)
        elif paper.version > stored[1] or (stored[2] and not flag):
            updated.append(paper)
        else:
            unchanged.append(arxiv_id)
    return new, updated, unchanged


def _paper(row: PaperRow, tags: Sequence[str] = ()) -> Paper:
    return Paper(
        arxiv_id=row.arxiv_id,
        version=row.version,
        title=row.title,
        abstract=row.abstract,
        authors=tuple(
            Author(a["name"], tuple(a.get("affiliations") or ())) for a in row.authors or ()
        ),
        categories=tuple(row.categories or ()),
        announced=row.announced,
        submitted=row.submitted,
        updated=row.updated,
        doi=row.doi,
        journal_ref=row.journal_ref,
        comment=row.comment,
        tags=tuple(tags),
    )


class PaperRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def upsert(self, papers: Iterable[Paper], *, sample: bool = False) -> UpsertResult:
        """Store papers by version-free id: insert new ones, move known ones to a newer
        version (metadata refreshed), ignore repeats. A batch may repeat an id; the
        highest version wins. Replacement announcements of unknown papers are stored
        (they still never count as new: callers decide that from `announce_type`).

        `sample`: these are bundled sample papers (`papers.sample`), which momentum never
        counts; so is any paper with a `sample:` key (`Paper.is_sample`). A real paper
        whose id is stored as a sample one takes its place (its metadata and announcement
        date, the flag cleared) and is reported as updated; a sample paper never
        overwrites a real one. The counts of announcement days change with the papers
        (`storage.announced_days`), and so do those of their tags by day
        (`storage.tag_days`) when a stored paper is counted on another day now.
        """
        latest = _latest_versions(papers)
        existing = await self._stored(list(latest))
        new, updated, unchanged = _sort_upserts(latest, existing, sample=sample)
        now = utcnow()
        await self._insert(new, now, sample=sample)
        await self._refresh(updated, existing, now, sample=sample)
        before = {p.arxiv_id: existing[p.arxiv_id][2:] for p in updated}
        await count_days(self._s, day_changes(new, updated, before, sample=sample))
        moves = day_moves(updated, before, sample=sample)
        await move_tags(self._s, {existing[a][0]: move for a, move in moves.items()})
        await self._s.flush()
        return UpsertResult(
            new=tuple(p.arxiv_id for p in new),
            updated=tuple(p.arxiv_id for p in updated),
            unchanged=tuple(unchanged),
        )

    async def _stored(self, arxiv_ids: Sequence[str]) -> dict[str, _Stored]:
        """The stored (row id, version, sample flag, announcement date) of those of
        `arxiv_ids` the index holds."""
        existing: dict[str, _Stored] = {}
        columns = (PaperRow.id, PaperRow.version, PaperRow.sample, PaperRow.announced)
        for chunk in chunks(arxiv_ids):
            stmt = select(PaperRow.arxiv_id, *columns).where(PaperRow.arxiv_id.in_(chunk))
            for arxiv_id, row_id, version, flag, day in (await self._s.execute(stmt)).all():
                existing[arxiv_id] = (row_id, version, flag, day)
        return existing

    async def _insert(self, new: Sequence[Paper], now: datetime, *, sample: bool) -> None:
        """Insert papers the index does not hold yet."""
        if not new:
            return
        rows = [
            {
                **_paper_values(p),
                "ingested_at": now,
                "updated_at": now,
                "sample": sample or p.is_sample,
            }
            for p in new
        ]
        for chunk in chunks(rows, 200):
            await self._s.execute(PaperRow.__table__.insert(), list(chunk))
        note_new_papers(self._s, [p.arxiv_id for p in new])  # indexed before commit

    async def _refresh(
        self,
        updated: Sequence[Paper],
        existing: dict[str, _Stored],
        now: datetime,
        *,
        sample: bool,
    ) -> None:
        """Overwrite stored papers with their newer version (or their real one), keeping
        the first announcement date when the new one has none; in row id order, the order
        in which writers of tags lock papers (`storage.tag_days.counted_days`). Papers
        this transaction inserted join the search index first: SQLite's update trigger
        takes a paper's old text out of the index, which must hold it."""
        if updated:
            await index_new_papers(self._s)
        for paper in sorted(updated, key=lambda p: existing[p.arxiv_id][0]):
            values = _paper_values(paper)
            if paper.announced is None:
                values.pop("announced")  # keep the first announcement date
            if not (sample or paper.is_sample):
                values["sample"] = False
            await self._s.execute(
                update(PaperRow)
                .where(PaperRow.id == existing[paper.arxiv_id][0])
                .values(**values, updated_at=now)
            )

    async def ids_for(self, arxiv_ids: Iterable[str]) -> dict[str, int]:
        return await paper_ids(self._s, arxiv_ids)

    async def add_tags(
        self, tags: Iterable[tuple[str, str, Sequence[str]]], source: str = "rule"
    ) -> int:
        """Attach (arxiv_id, tag, why) triples; existing (paper, tag) pairs are kept. The
        per-day tag counts (`storage.tag_days`) gain the tags of counted papers."""
        added, changes = await attach(self._s, list(tags), source)
        await count_tags(self._s, changes)
        return added

    async def tags_with_why(self, arxiv_id: str) -> list[tuple[str, tuple[str, ...]]]:
        stmt = (
            select(PaperTagRow.tag, PaperTagRow.why)
            .join(PaperRow, PaperRow.id == PaperTagRow.paper_id)
            .where(PaperRow.arxiv_id == arxiv_id)
            .order_by(PaperTagRow.tag)
        )
        return [(tag, tuple(why or ())) for tag, why in (await self._s.execute(stmt)).all()]

    async def replace_rule_tags(
        self, arxiv_ids: Sequence[str], tags: Iterable[tuple[str, str, Sequence[str]]]
    ) -> int:
        """Drop the rule-made tags of these papers and attach `tags` instead (retagging);
        the per-day tag counts change by what differs in the end."""
        ids = await self.ids_for(arxiv_ids)
        changes = await drop_rule_tags(self._s, list(ids.values()))
        added, more = await attach(self._s, list(tags), "rule")
        changes.update(more)
        await count_tags(self._s, changes)
        return added

    async def page(self, after: str | None, limit: int) -> list[Paper]:
        """Papers in arXiv id order after `after`, for walking the whole index."""
        stmt = select(PaperRow).order_by(PaperRow.arxiv_id).limit(limit)
        if after is not None:
            stmt = stmt.where(PaperRow.arxiv_id > after)
        return [_paper(r) for r in (await self._s.execute(stmt)).scalars()]

    async def by_ids(self, paper_ids: Sequence[int]) -> dict[int, Paper]:
        """Papers (with their tags) by database id."""
        rows: list[PaperRow] = []
        for chunk in chunks(list(paper_ids)):
            stmt = select(PaperRow).where(PaperRow.id.in_(chunk))
            rows.extend((await self._s.execute(stmt)).scalars())
        tags = await self._tags_for([r.id for r in rows])
        return {r.id: _paper(r, tags.get(r.id, ())) for r in rows}

    async def get(self, arxiv_id: str) -> Paper | None:
        row = (
            await self._s.execute(select(PaperRow).where(PaperRow.arxiv_id == arxiv_id))
        ).scalar_one_or_none()
        if row is None:
            return None
        return _paper(row, (await self._tags_for([row.id])).get(row.id, ()))

    async def latest(
        self,
        tags: Sequence[str] | None = None,
        limit: int = 5,
        offset: int = 0,
        without: Sequence[str] = (),
    ) -> list[Paper]:
        """Newest papers first (by announcement, then arXiv id), optionally with any of
        `tags` and none of `without`: `limit` of them after the first `offset` (a page of
        /latest)."""
        stmt = _filtered(select(PaperRow), tags, without)
        stmt = (
            stmt.order_by(PaperRow.announced.desc().nulls_last(), PaperRow.arxiv_id.desc())
            .limit(limit)
            .offset(offset)
        )
        rows = list((await self._s.execute(stmt)).scalars())
        tag_map = await self._tags_for([r.id for r in rows])
        return [_paper(r, tag_map.get(r.id, ())) for r in rows]

    async def new_since(self, since: datetime) -> int:
        """How many new papers ingests have brought in after `since` (sample papers
        never count)."""
        stmt = (
            select(func.count(PaperRow.id))
            .join(BatchRow, BatchRow.id == PaperRow.batch_id)
            .where(BatchRow.created_at > since, ~PaperRow.sample)
        )
        return int((await self._s.execute(stmt)).scalar_one())

    async def batch_tags(self, batch_ids: Iterable[int]) -> dict[int, dict[int, list[str]]]:
        """The tags of every paper in the batches: batch -> paper id -> tags."""
        result: dict[int, dict[int, list[str]]] = {}
        for chunk in chunks(sorted(set(batch_ids))):
            stmt = (
                select(PaperRow.batch_id, PaperTagRow.paper_id, PaperTagRow.tag)
                .join(PaperRow, PaperRow.id == PaperTagRow.paper_id)
                .where(PaperRow.batch_id.in_(chunk))
            )
            for batch, paper, tag in (await self._s.execute(stmt)).all():
                result.setdefault(batch, {}).setdefault(paper, []).append(tag)
        return result

    async def _tags_for(self, paper_ids: Sequence[int]) -> dict[int, list[str]]:
        result: dict[int, list[str]] = {}
        if not paper_ids:
            return result
        stmt = (
            select(PaperTagRow.paper_id, PaperTagRow.tag)
            .where(PaperTagRow.paper_id.in_(list(paper_ids)))
            .order_by(PaperTagRow.tag)
        )
        for paper_id, tag in (await self._s.execute(stmt)).all():
            result.setdefault(paper_id, []).append(tag)
        return result

    async def count(self, tags: Sequence[str] | None = None, without: Sequence[str] = ()) -> int:
        """Papers stored, or those with any of `tags`, and none of `without`."""
        stmt = _filtered(select(func.count(PaperRow.id)), tags, without)
        return int((await self._s.execute(stmt)).scalar_one())

    async def extent(self, tags: Sequence[str] | None = None) -> tuple[int, date | None]:
        """`count(tags)` and the first day those papers cover (`bot.ports.PaperStore`).
        Three subqueries in one statement: each minimum then reads one end of its column's
        index; in one aggregate with the count, SQLite read every paper (70 ms for all
        of 100,000, against 5)."""
        parts = (
            func.count(PaperRow.id),
            func.min(PaperRow.announced),
            func.min(PaperRow.ingested_at),
        )
        stmt = select(*(_filtered(select(part), tags, ()).scalar_subquery() for part in parts))
        count, announced, stored = (await self._s.execute(stmt)).one()
        return int(count), announced or (stored.date() if stored else None)


def _filtered(stmt: Any, tags: Sequence[str] | None, without: Sequence[str]) -> Any:
    if tags is not None:
        stmt = stmt.where(PaperRow.id.in_(_tagged(tags)))
    if without:
        stmt = stmt.where(PaperRow.id.not_in(_tagged(without)))
    return stmt


def _tagged(tags: Sequence[str]) -> Any:
    """The ids of papers with any of `tags` (a subquery)."""
    return select(PaperTagRow.paper_id).where(PaperTagRow.tag.in_(list(tags)))
