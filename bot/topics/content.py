"""What an alert or a digest says, as a neutral `Reply` every platform renders.

Built at sending time from the current state, so a tag muted after a paper was
queued is still respected, and an alert whose every reason was muted is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.domain import (
    Action,
    Button,
    Paper,
    PaperItem,
    Reply,
    Section,
    Subscription,
    SubscriptionKind,
)
from bot.topics.card import paper_item, shorten, tag_name
from bot.topics.catalog import Catalog
from bot.topics.latex import display
from bot.topics.learned import ChatModel, holds_back, order
from bot.topics.tagline import TagLine, tag_line
from bot.topics.tldr import shorten_words

DIGEST_PER_TOPIC = 5
MUTE_BUTTONS = 2  # offered from the tags the alert shows, so a person mutes what they see
# "Ask about <topic>" buttons under a digest: one a section, two a row, at most this many
# (Telegram keyboards and Slack's blocks stay small; /ask <topic>: ... reaches any topic).
DIGEST_ASK_BUTTONS = 8
ASK_PREFIX = "Ask about "
ASK_LABEL_CHARS = 60  # within Slack's 75 and Telegram's 64 characters a button label
# 👍/👎 under a digest: a row for each of its first papers as shown, labelled with the start of
# the title (more rows would bury the digest; /more and /less take any paper it lists).
DIGEST_VOTES = 6
VOTE_TITLE_CHARS = 28


def ask_button(tag: str, name: str) -> Button:
    """The button that starts a question about a topic (its slug) or a followed query (its
    tag); `name` is what the chat calls it."""
    return Button(shorten(ASK_PREFIX + name, ASK_LABEL_CHARS), Action.ASK, tag)


def ask_rows(pairs: Sequence[tuple[str, str]], per_row: int = 2) -> tuple[tuple[Button, ...], ...]:
    """ "Ask about" buttons for (tag, name) pairs, `per_row` a row."""
    cells = [ask_button(tag, name) for tag, name in pairs]
    return tuple(tuple(cells[i : i + per_row]) for i in range(0, len(cells), per_row))


@dataclass(frozen=True, slots=True)
class Audience:
    """What one chat follows and mutes."""

    subscriptions: tuple[Subscription, ...]
    mutes: tuple[tuple[str, str], ...]  # (tag, scope); scope "" = everywhere

    def reasons(self, paper: Paper) -> tuple[Subscription, ...]:
        """The subscriptions that bring `paper` to this chat, after mutes."""
        return self.reasons_for(paper.tags)

    def reasons_for(self, paper_tags: Iterable[str]) -> tuple[Subscription, ...]:
        """The subscriptions that bring a paper with these tags, after mutes."""
        tags = set(paper_tags)
        muted = {(t, scope) for t, scope in self.mutes if t in tags}
        return tuple(
            s
            for s in self.subscriptions
            if s.tag in tags and not any(scope in ("", s.tag) for _, scope in muted)
        )


def shown_tags(catalog: Catalog, paper: Paper, audience: Audience) -> TagLine:
    """The tags an alert or digest shows for `paper`: the followed topics that brought it
    (after mutes) first, then its most specific other topics (`bot.topics.tagline`)."""
    return tag_line(catalog, paper.tags, [s.tag for s in audience.reasons(paper)])


def _item(catalog: Catalog, paper: Paper, audience: Audience, *, summary: bool) -> PaperItem:
    followed = {s.tag for s in audience.reasons(paper)}
    return paper_item(catalog, paper, followed, audience.subscriptions, summary=summary)


def pinned(subs: Iterable[Subscription]) -> tuple[Subscription, ...]:
    """Followed authors first, the rest in their order: a followed author's papers lead
    a digest, and an alert names the author first ("New on 👤 Sergey Levine, ...")."""
    return tuple(sorted(subs, key=lambda s: s.kind is not SubscriptionKind.AUTHOR))


def vote_row(
    paper: Paper, up: str = "👍 More like this", down: str = "👎 Less like this"
) -> tuple[Button, ...]:
    return (Button(up, Action.MORE, paper.arxiv_id), Button(down, Action.LESS, paper.arxiv_id))


def digest_votes(papers: Sequence[Paper]) -> tuple[tuple[Button, ...], ...]:
    """A 👍/👎 row for each of the first `DIGEST_VOTES` papers, named by their title's start."""
    return tuple(
        vote_row(p, "👍 " + shorten_words(display(p.title) or p.shown_id, VOTE_TITLE_CHARS), "👎")
        for p in papers[:DIGEST_VOTES]
    )


def held_back(catalog: Catalog, paper: Paper, audience: Audience, model: ChatModel | None) -> bool:
    """Whether the chat's learned filter holds back an alert of `paper` (`bot.topics.learned`):
    the names that protect it are those of the followed topics that brought it."""
    reasons = audience.reasons(paper)
    names = [s.label for s in reasons if s.kind is SubscriptionKind.TOPIC]
    for sub in reasons:
        topic = catalog.by_slug(sub.tag) if sub.kind is SubscriptionKind.TOPIC else None
        names += [topic.name, *topic.aliases] if topic else []
    return holds_back(model, paper, [s.tag for s in reasons], names)


def alert(catalog: Catalog, paper: Paper, audience: Audience) -> Reply | None:
    """One new paper, with the topics that brought it and the buttons to act on it."""
    reasons = pinned(audience.reasons(paper))
    if not reasons:
        return None
    labels = ", ".join(tag_name(catalog, s.tag, audience.subscriptions) for s in reasons)
    first = reasons[0]
    others = shown_tags(catalog, paper, audience).others
    buttons: list[tuple[Button, ...]] = [
        vote_row(paper),
        tuple(
            Button(f"Mute {tag_name(catalog, t, audience.subscriptions)}", Action.MUTE, t)
            for t in others[:MUTE_BUTTONS]
        ),
        (
            Button("Why this paper?", Action.WHY, paper.arxiv_id),
            Button(f"Latest in {first.label}", Action.LATEST, first.tag),
        ),
    ]
    if first.kind is SubscriptionKind.TOPIC:
        buttons.append((Button(f"Unfollow {first.label}", Action.UNFOLLOW, first.tag),))
    return Reply(
        lines=(f"New on {labels}:",),
        papers=(_item(catalog, paper, audience, summary=True),),
        buttons=tuple(row for row in buttons if row),
    )


def digest(
    catalog: Catalog,
    papers: Sequence[Paper],
    audience: Audience,
    title: str,
    momentum: Mapping[str, str] | None = None,
    model: ChatModel | None = None,
) -> Reply | None:
    """Papers grouped by followed topic, best first, at most a few per topic, each topic
    with its momentum sentence when there is one (`momentum`: tag -> sentence); followed
    authors' sections first, and a paper by one is placed there (`pinned`). In a topic the
    chat's 👍/👎 `model` has learned, its score decides what is best (`bot.topics.learned`)."""
    linear = model.linear() if model is not None else None
    placed: dict[str, list[Paper]] = {s.tag: [] for s in audience.subscriptions}
    for paper in papers:
        reasons = pinned(audience.reasons(paper))
        if reasons:
            placed[reasons[0].tag].append(paper)
    if not any(placed.values()):
        return None

    sections = []
    asked: list[tuple[str, str]] = []
    listed: list[Paper] = []
    total = 0
    for sub in pinned(audience.subscriptions):
        found = sorted(  # best first, then newer: the order /latest shows them in
            placed[sub.tag],
            key=lambda p: (len(audience.reasons(p)), _day(p), p.arxiv_id),
            reverse=True,
        )
        if not found:
            continue
        if linear is not None and model is not None and model.orders(sub.tag):
            found = order(found, linear)
        total += len(found)
        asked.append((sub.tag, sub.label))
        shown = found[:DIGEST_PER_TOPIC]
        listed += shown
        more = len(found) - len(shown)
        sections.append(
            Section(
                heading=f"{tag_name(catalog, sub.tag, audience.subscriptions)} ({len(found)} new)",
                papers=tuple(_item(catalog, p, audience, summary=False) for p in shown),
                footer=f"+{more} more: /latest {sub.label} pages through them" if more else None,
                note=(momentum or {}).get(sub.tag),
            )
        )
    return Reply(
        lines=(f"{title}: {total} new paper(s) on what you follow.",),
        sections=tuple(sections),
        buttons=digest_votes(listed) + ask_rows(asked[:DIGEST_ASK_BUTTONS]),
    )


def _day(paper: Paper) -> int:
    return paper.announced.toordinal() if paper.announced else 0
