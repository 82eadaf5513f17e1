"""Topic momentum: the figures, the coverage they stand on, the sentence and the sparkline.

Pure functions over counts (stdlib only); `storage.momentum_counts` computes the counts and
the index's coverage from the papers that came from arXiv. The bundled sample papers
never count: not in a count, a share, a rise, a sparkline or a spike.

Coverage: what history the figures stand on. A rate compares windows, so it is only
shown when the index really holds those windows. From the distinct announcement dates of
the stored non-sample papers ("indexed days"), up to `as_of` (the newest indexed day that
is not in the future):

- the *stretch* is the unbroken run of indexed days ending at `as_of`: going back from
  `as_of`, each indexed day is at most `MAX_GAP` [7] days after the one before it. A week
  without a single indexed day is a break (arXiv announces every weekday; a long weekend
  or the end-of-year holidays leave at most five or six days between two listings, while a
  poller that stopped for a week or more leaves a hole no count should hide);
- the index *covers* the last `w` weeks (the `w` 7-day buckets ending at `as_of`) when
  the stretch starts on or before the first day of the oldest of them (a Saturday and
  Sunday just before the stretch's first day count as held: arXiv prints no listing
  dated on a weekend, so a stretch that starts on a Monday holds them);
  `Coverage.weeks` is the largest such `w`;
- the last four weeks can be compared with the four before (growth, "% of all new
  papers", "(trending)", spike alerts) only when it covers `COMPARED_WEEKS` [8] weeks.

Before that the sentence says only what is known: "21 papers since 28 Nov 2024
(paperwatch has indexed 1 day so far; rises are shown after 8 weeks)." once the index
is younger than four weeks, "N papers in the last four weeks (...)" after, and names the
hole when a break is what is missing ("indexed N days" counts the days of the stretch).
Counts always take every non-sample paper in their window, also from before a break;
only what is claimed of them waits for coverage. Sparklines and charts show the covered
weeks only.

Windows. Counts are taken by announcement date in 7-day buckets ending at `as_of`
(inclusive): bucket 0 is `as_of - 6 .. as_of`, bucket 1 the seven days before, and so
on. `weekly` lists them oldest first, so `sum(weekly[-4:]) == last_28` and
`sum(weekly[-8:-4]) == prior_28`.

The sentence (as on the index page that inspired the bot)::

    70 papers in the last four weeks, up 141% on the four weeks before. 0.7% of all new papers.

Growth is `(last - prior) / prior * 100`, rounded half away from zero on exact fractions
(70 vs 29 gives 141); within ±5% (after rounding) it reads "about the same as the four
weeks before"; with no papers in the four weeks before it reads "N papers, new in the
last four weeks."; with none in either window it is "No papers in the last eight
weeks.". The share has one decimal (70 of 10,000 is "0.7%"), "<0.1%" when it rounds to
zero without being zero, and is left out when the topic has no papers in the window.

The spike rule, which alerts on a sudden rise, is `bot.topics.spike_rule`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from fractions import Fraction

BLOCKS = "▁▂▃▄▅▆▇█"
ABOUT_THE_SAME = 5  # percent, either way
MAX_GAP = 7  # days between two indexed days before the index counts as broken
WINDOW_WEEKS = 4  # the last 28 days, and the 28 before them
COMPARED_WEEKS = 2 * WINDOW_WEEKS
NO_LISTING_WEEKDAYS = frozenset({5, 6})  # arXiv prints no listing dated Saturday or Sunday


@dataclass(frozen=True, slots=True)
class Coverage:
    """What the index holds of arXiv up to `as_of` (rules in the module docstring)."""

    since: date | None = None  # the first day of the stretch; None: no indexed day at all
    days: int = 0  # indexed days in the stretch
    weeks: int = 0  # whole 7-day buckets ending at `as_of` the stretch covers
    gap_from: date | None = None  # the last indexed day before the stretch (a break)

    def covers(self, weeks: int) -> bool:
        return self.weeks >= weeks


def coverage(
    days: Iterable[date], as_of: date, max_weeks: int, gap_from: date | None = None
) -> Coverage:
    """The coverage of the indexed `days` at `as_of`, counted in up to `max_weeks` weeks.

    `days` must hold every indexed day from `as_of - 7 * max_weeks - MAX_GAP + 1` on
    (older ones are allowed); `gap_from` is the last indexed day before the stretch when
    the caller knows it (the stretch may reach further back than `days` do)."""
    known = sorted({d for d in days if d <= as_of}, reverse=True)
    if not known:
        return Coverage(gap_from=gap_from)
    stretch = [known[0]]
    for day in known[1:]:
        if (stretch[-1] - day).days > MAX_GAP:
            gap_from = day
            break
        stretch.append(day)
    since = held_from = stretch[-1]
    while (held_from - timedelta(days=1)).weekday() in NO_LISTING_WEEKDAYS:
        held_from -= timedelta(days=1)
    weeks = min(max_weeks, ((as_of - held_from).days + 1) // 7)
    return Coverage(since=since, days=len(stretch), weeks=weeks, gap_from=gap_from)


@dataclass(frozen=True, slots=True)
class Momentum:
    """How much a topic was written about lately. Counts never include papers whose
    announcement date is unknown, nor sample papers.

    `coverage` None means the caller vouches that the index holds every week of
    `weekly` (pure uses, benchmarks); `storage.momentum_counts` always says what it holds."""

    tag: str
    weekly: tuple[int, ...]  # 7-day buckets ending at `as_of`, oldest first
    last_28: int
    prior_28: int
    all_last_28: int  # papers of every topic announced in the last 28 days
    as_of: date | None = None
    coverage: Coverage | None = None

    @property
    def growth(self) -> float | None:
        """Relative change of the last 28 days on the 28 before; inf from zero, None at 0/0."""
        return _growth(self.last_28, self.prior_28)

    @property
    def share(self) -> float | None:
        """Fraction of all papers of the last 28 days; None when there were none."""
        return self.last_28 / self.all_last_28 if self.all_last_28 else None

    @property
    def known_weeks(self) -> int:
        """How many of the newest weeks of `weekly` the index covers."""
        if self.coverage is None:
            return len(self.weekly)
        return min(len(self.weekly), self.coverage.weeks)

    @property
    def known_weekly(self) -> tuple[int, ...]:
        """`weekly` without the weeks the index does not cover (oldest first)."""
        return self.weekly[len(self.weekly) - self.known_weeks :]

    @property
    def compared(self) -> bool:
        """Whether the last four weeks may be compared with the four before (and with all
        papers): the index covers both windows."""
        return self.coverage is None or self.coverage.covers(COMPARED_WEEKS)


def _growth(last: int, prior: int) -> float | None:
    if prior:
        return (last - prior) / prior
    return math.inf if last else None


def _round_half_away(value: Fraction) -> int:
    magnitude = math.floor(abs(value) + Fraction(1, 2))
    return magnitude if value >= 0 else -magnitude


def growth_percent(last: int, prior: int) -> int | None:
    """`round((last - prior) / prior * 100)`, exact; None when `prior` is 0."""
    if not prior:
        return None
    return _round_half_away(Fraction(100 * (last - prior), prior))


def share_text(part: int, whole: int) -> str:
    """ "0.7%" for 70 of 10,000; "<0.1%" when it rounds to zero but is not zero."""
    if not whole:
        return "0%"
    tenths = _round_half_away(Fraction(1000 * part, whole))
    if tenths == 0 and part:
        return "<0.1%"
    return f"{tenths // 10:,}.{tenths % 10}%"


def _papers(count: int) -> str:
    return f"{count:,} paper" if count == 1 else f"{count:,} papers"


def _days(count: int) -> str:
    return f"{count:,} day" if count == 1 else f"{count:,} days"


def coverage_note(c: Coverage) -> str:
    """Why a rate is not shown yet, in a few words (no full stop)."""
    if c.gap_from is not None and c.since is not None:
        return (
            f"paperwatch holds no papers from {c.gap_from + timedelta(days=1):%d %b %Y} to "
            f"{c.since - timedelta(days=1):%d %b %Y}; rises are shown once it has "
            f"{COMPARED_WEEKS} weeks without such a gap"
        )
    return (
        f"paperwatch has indexed {_days(c.days)} so far; rises are shown after "
        f"{COMPARED_WEEKS} weeks"
    )


def sentence(m: Momentum, *, note: bool = True) -> str:
    """The momentum of a topic in one or two sentences (see the module docstring).
    Before the index covers the compared weeks it gives the count it can stand behind,
    with `coverage_note` in brackets unless `note` is False (a heading says it once)."""
    if not m.compared:
        return _uncompared(m, note=note)
    last, prior = m.last_28, m.prior_28
    if not last and not prior:
        return "No papers in the last eight weeks."
    if not prior:
        text = f"{_papers(last)}, new in the last four weeks."
    else:
        pct = growth_percent(last, prior)
        assert pct is not None
        if abs(pct) <= ABOUT_THE_SAME:
            trend = "about the same as the four weeks before"
        elif pct > 0:
            trend = f"up {pct:,}% on the four weeks before"
        else:
            trend = f"down {-pct:,}% on the four weeks before"
        text = f"{_papers(last)} in the last four weeks, {trend}."
    if last and m.all_last_28:
        text += f" {share_text(last, m.all_last_28)} of all new papers."
    return text


def _uncompared(m: Momentum, *, note: bool) -> str:
    c = m.coverage
    assert c is not None
    if c.since is None:
        return "No papers from arXiv are indexed yet (the bundled sample papers never count)."
    if c.covers(WINDOW_WEEKS) or c.gap_from is not None:
        text = f"{_papers(m.last_28)} in the last four weeks"
    else:
        text = f"{_papers(m.last_28)} since {c.since:%d %b %Y}"
    return f"{text} ({coverage_note(c)})." if note else f"{text}."


def sparkline(weekly: tuple[int, ...] | list[int]) -> str:
    """One block per week, scaled to the busiest week; zero is the lowest block and
    any non-zero week is at least one step above it. Empty input gives ""."""
    values = [max(0, v) for v in weekly]
    top = max(values, default=0)
    if not top:
        return BLOCKS[0] * len(values)
    steps = len(BLOCKS) - 1
    return "".join(
        BLOCKS[0] if not v else BLOCKS[1 + round((v / top) * (steps - 1))] for v in values
    )
