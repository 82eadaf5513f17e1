"""Momentum figures straight from SQL aggregates, and the spike alert state.

Counts are by `papers.announced` in 7-day buckets ending at `as_of` (bucket 0 is
`as_of - 6 .. as_of`; see `bot.topics.momentum`), so the last four buckets are exactly
the last 28 days and the four before them the prior 28. No paper or tag is ever read:
every tag's weekly figures sum the per-(tag, day) counts of `tag_days`
(`storage.tag_days`), a row per tag and day, and the total of all new papers and the
coverage the per-day counts of `announced_days` (`storage.announced_days`), a row a day.
Papers whose announcement date is unknown (NULL) never count, nor do the bundled sample
papers (`papers.sample`): not in a count, the total, the newest day or the coverage
(`bot.topics.momentum` says what coverage is and what it allows).

The bucket of a day is `(as_of - day) / 7` in integer days: date subtraction on
PostgreSQL, `julianday` differences on SQLite (the one dialect switch).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from sqlalchemy import Date, Integer, bindparam, cast, false, func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.topics.momentum import COMPARED_WEEKS, MAX_GAP, WINDOW_WEEKS, Coverage, Momentum, coverage
from bot.topics.spike_rule import AlertState
from storage.models import AnnouncedDayRow, MomentumAlertRow, PaperRow, TagDayRow

MIN_WEEKS = COMPARED_WEEKS
# The newest day leaves the sample papers out (the (sample, announced) index, 0010).
_COUNTED = PaperRow.sample == false()
_CHUNK = 500
# A day of `announced_days` with counted papers (a day's count may have fallen to 0).
_HELD = AnnouncedDayRow.papers > 0


class MomentumRepository:
    """Weekly counts per tag and the 28-day windows; spike alert state per chat."""

    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    def _bucket(self, as_of: date) -> Any:
        """SQL for the 7-day bucket index of `tag_days.day` (0 = the newest week)."""
        day = bindparam("as_of_day", as_of, type_=Date)
        if self._s.get_bind().dialect.name == "sqlite":
            days = cast(func.julianday(day) - func.julianday(TagDayRow.day), Integer)
        else:
            days = cast(day, Date) - TagDayRow.day
        return (days // literal_column("7", Integer)).label("bucket")

    async def latest_announced(self, today: date | None = None) -> date | None:
        """The newest announcement date in the index, not after `today` when given."""
        stmt = select(func.max(PaperRow.announced)).where(_COUNTED)
        if today is not None:
            stmt = stmt.where(PaperRow.announced <= today)
        return (await self._s.execute(stmt)).scalar_one_or_none()

    async def total(self, as_of: date, days: int = 28) -> int:
        """Papers of every topic announced in the `days` days ending at `as_of`."""
        stmt = select(func.coalesce(func.sum(AnnouncedDayRow.papers), 0)).where(
            AnnouncedDayRow.day.between(as_of - timedelta(days=days - 1), as_of)
        )
        return int((await self._s.execute(stmt)).scalar_one())

    async def coverage(self, as_of: date, weeks: int) -> Coverage:
        """What the index holds of the `weeks` weeks ending at `as_of` (the rule:
        `bot.topics.momentum`): the distinct indexed days of those weeks (and of the
        `MAX_GAP` days before, to see whether the stretch reaches back past them), and,
        when the stretch starts inside them, the indexed day before it."""
        start = as_of - timedelta(days=7 * weeks + MAX_GAP - 1)
        stmt = select(AnnouncedDayRow.day).where(AnnouncedDayRow.day.between(start, as_of), _HELD)
        days = list((await self._s.execute(stmt)).scalars())
        found = coverage(days, as_of, weeks)
        if found.since is None or found.gap_from is not None or found.weeks >= weeks:
            return found
        before = select(func.max(AnnouncedDayRow.day)).where(
            AnnouncedDayRow.day < found.since, _HELD
        )
        gap_from = (await self._s.execute(before)).scalar_one_or_none()
        return coverage(days, as_of, weeks, gap_from)

    async def weekly_counts(
        self, tags: Sequence[str] | None, as_of: date, weeks: int
    ) -> dict[str, list[int]]:
        """Per tag, `weeks` bucket counts oldest first; only tags with papers appear."""
        bucket = self._bucket(as_of)
        start = as_of - timedelta(days=7 * weeks - 1)
        stmt = (
            select(TagDayRow.tag, bucket, func.sum(TagDayRow.papers))
            .where(TagDayRow.day.between(start, as_of), TagDayRow.papers > 0)
            .group_by(TagDayRow.tag, bucket)
        )
        found: dict[str, list[int]] = {}
        groups: list[Sequence[str] | None] = [None]
        if tags is not None:
            groups = [tags[i : i + _CHUNK] for i in range(0, len(tags), _CHUNK)]
        for group in groups:
            query = stmt if group is None else stmt.where(TagDayRow.tag.in_(list(group)))
            for tag, index, count in (await self._s.execute(query)).all():
                counts = found.setdefault(tag, [0] * weeks)
                counts[weeks - 1 - int(index)] += int(count)
        return found

    async def for_tags(
        self, tags: Sequence[str] | None, as_of: date, weeks: int = 26
    ) -> dict[str, Momentum]:
        """Momentum of each tag in `tags` (zero figures for tags without papers), or of
        every tag with papers in the last `weeks` weeks when `tags` is None; each says
        what the index covers (`Momentum.coverage`)."""
        if weeks < MIN_WEEKS:
            raise ValueError(f"weeks must be at least {MIN_WEEKS}, not {weeks}")
        wanted = None if tags is None else list(dict.fromkeys(tags))
        if wanted is not None and not wanted:
            return {}
        counts = await self.weekly_counts(wanted, as_of, weeks)
        everything = await self.total(as_of)
        held = await self.coverage(as_of, weeks)
        names = wanted if wanted is not None else sorted(counts)
        result = {}
        for tag in names:
            weekly = tuple(counts.get(tag, [0] * weeks))
            result[tag] = Momentum(
                tag=tag,
                weekly=weekly,
                last_28=sum(weekly[-WINDOW_WEEKS:]),
                prior_28=sum(weekly[-MIN_WEEKS:-WINDOW_WEEKS]),
                all_last_28=everything,
                as_of=as_of,
                coverage=held,
            )
        return result

    async def for_tag(self, tag: str, as_of: date, weeks: int = 26) -> Momentum:
        return (await self.for_tags([tag], as_of, weeks))[tag]

    # --- spike alert state -------------------------------------------------------------

    async def alert_state(self, chat_id: int, tag: str) -> AlertState:
        """Armed and never alerted, unless stored otherwise."""
        row = await self._s.get(MomentumAlertRow, (chat_id, tag))
        if row is None:
            return AlertState()
        return AlertState(armed=row.armed, last_alert_at=row.last_alert_at)

    async def save_alert_state(self, chat_id: int, tag: str, state: AlertState) -> None:
        row = await self._s.get(MomentumAlertRow, (chat_id, tag))
        if row is None:
            row = MomentumAlertRow(chat_id=chat_id, tag=tag)
            self._s.add(row)
        row.armed = state.armed
        row.last_alert_at = state.last_alert_at
        await self._s.flush()
