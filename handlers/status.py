"""/status: is the index fresh, and when is the next arXiv mailing due?

Lets a reader tell "arXiv did not announce today" from "the bot is broken".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from bot.arxiv.calendar import fast_window, listing_date, next_announcement
from bot.domain import Command, PollState, Reply
from handlers.base import Context


def _when(moment: datetime) -> str:
    return moment.strftime("%a %d %b %Y %H:%M %Z")


def _day(day: date) -> str:
    return day.strftime("%a %d %b %Y")


def describe(
    states: Sequence[PollState],
    papers: int,
    now: datetime,
    *,
    sample_only: bool = False,
    newest: date | None = None,
) -> list[str]:
    """Plain sentences about the arXiv sources, for chat and terminal alike; `sample_only`
    when every stored paper is one of the bundled sample (none came from arXiv); `newest`,
    the newest announcement date of a paper from arXiv in the index, if known."""
    rss = [s for s in states if s.source.startswith("rss:")]
    lines: list[str] = []
    if (not rss or rss[0].last_announced is None) and newest is not None:
        lines.append(
            "No daily announcement has been polled yet; the newest paper in the index, stored "
            f"from a file or a backfill, was announced on {_day(newest)}."
        )
    elif not rss or rss[0].last_announced is None:
        lines.append("No arXiv announcement has been stored yet.")
    else:
        state = rss[0]
        fetched = f" (fetched {_when(state.last_success_at)})" if state.last_success_at else ""
        lines.append(
            f"Last announcement stored: the listing of {_day(state.last_announced)}, "
            f"{state.last_count:,} new paper(s){fetched}."
        )
    for state in rss:
        if state.last_attempt_at is None:
            continue
        if state.last_error:
            lines.append(
                f"Last check {_when(state.last_attempt_at)} FAILED: {state.last_error}. "
                "It is retried automatically."
            )
        else:
            lines.append(f"Last check {_when(state.last_attempt_at)}: OK.")
    upcoming = next_announcement(now)
    lines.append(
        f"Next arXiv announcement expected {_when(upcoming)} (the listing of "
        f"{_day(listing_date(upcoming))}); arXiv's feed brings it at "
        f"{_when(fast_window(upcoming)[0])}. "
        "arXiv does not announce on Friday and Saturday evenings or on its holidays."
    )
    if sample_only:
        lines.append(
            f"Papers in the index: {papers:,}, all from the bundled sample (they never count in "
            "momentum); arXiv's own arrive with its next announcement."
        )
    else:
        lines.append(f"Papers in the index: {papers:,}.")
    return lines


async def status(cmd: Command, ctx: Context) -> Reply:
    """Freshness of the paper index and the next expected announcement."""
    async with ctx.uow() as uow:
        states = await uow.poll_state.all()
        papers = await uow.papers.count()
        from_arxiv = await uow.momentum.latest_announced() if papers else None
    sample_only = papers > 0 and from_arxiv is None
    lines = describe(states, papers, ctx.clock(), sample_only=sample_only, newest=from_arxiv)
    return Reply.text(*lines)
