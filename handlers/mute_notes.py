"""What /mute adds to its answer when a mute would hold back more than its words suggest:
a tag on a large share of recent papers (`broad_tag_warning`), or on most of the stored
papers of something the chat follows (`followed_tag_warning`). Each is one line or None;
neither changes anything.
"""

from __future__ import annotations

from datetime import date

from bot.domain import Topic
from bot.ports import UnitOfWork

BROAD_SHARE = 0.10  # /mute names the share of recent papers a tag is on from this share


async def broad_tag_warning(uow: UnitOfWork, tag: Topic, today: date) -> str | None:
    """One line for /mute when `tag` is on a large share of the papers indexed in the last
    four weeks (sample papers never count); None otherwise."""
    as_of = await uow.momentum.latest_announced(today)
    if as_of is None:
        return None
    figures = await uow.momentum.for_tag(tag.slug, as_of)
    if figures.share is None or figures.share < BROAD_SHARE:
        return None
    return (
        f"Note: {tag.name} is on {figures.share:.0%} of the {figures.all_last_28:,} papers "
        f"indexed in the four weeks to {as_of:%d %b %Y}, so this mute holds back that many."
    )


#: /mute warns when it holds back at least this share of a followed subscription's papers.
FOLLOWED_HELD_SHARE = 0.5
#: The subscriptions /mute looks at, oldest first (two counts each).
FOLLOWED_CHECKED = 50


async def followed_tag_warning(
    uow: UnitOfWork, chat_id: int, tag: str, scope: str = ""
) -> str | None:
    """One line for /mute when the muted `tag` is on most of the stored papers of something
    the chat follows (within `scope` only, when the mute is scoped): muting Reinforcement
    Learning while following RL for LLM Agents silences nearly all of it. None otherwise."""
    worst: tuple[int, float, int, str] | None = None
    subs = [s for s in await uow.subscriptions.for_chat(chat_id) if s.tag]
    for sub in subs[:FOLLOWED_CHECKED]:
        if scope and sub.tag != scope:
            continue
        total = await uow.papers.count([sub.tag])
        if not total:
            continue
        held = total - await uow.papers.count([sub.tag], without=[tag])
        found = (held, held / total, total, sub.label)
        if held >= FOLLOWED_HELD_SHARE * total and (worst is None or found[:2] > worst[:2]):
            worst = found  # the subscription that loses the most papers
    if worst is None:
        return None
    held, _, total, label = worst
    followed = f"of {label}, which you follow,"
    if total == 1:
        return f"Careful: the one stored paper {followed} has it: it is held back too."
    share = f"all {total:,}" if held == total else f"{held:,} of the {total:,}"
    return f"Careful: {share} stored papers {followed} have it: they are held back too."
