"""The paper card: what every alert, digest and paper list shows of one paper, as plain fields.

Two steps, both pure. `paper_item` decides what a chat is shown of a paper (which of its tags,
under which names, and a TL;DR or not); `card` turns that into the fields of the card, in
display order, each cut to `LIMITS`. The Telegram, Slack and terminal renderers add only their
markup (HTML, mrkdwn, plain text) and their message-wide limits, so the three show the same
fields in the same order, and a limit changed here changes all three. Every card carries the
paper's id in a form `/why` takes (`bot.domain.Paper.shown_id`): whatever a chat is shown, it
can ask about.

Paper text is hostile (`<`, `&`, LaTeX, 5,000-character titles, right-to-left text, emoji,
zero-width characters). Its LaTeX is shown as Unicode (`bot.topics.latex`: title, names,
affiliations, TL;DR; stored text stays as it came), and it is cut here, on plain text, before any
renderer escapes it, so an entity (`&amp;`) or a tag is never cut in half. URLs are never cut: a
shortened link is a wrong one, and a paper's links are built from its id
(`bot.domain.Paper.abs_url`), not from its text.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from bot.domain import Paper, PaperItem, Subscription, SubscriptionKind
from bot.topics.catalog import Catalog
from bot.topics.latex import display
from bot.topics.tagline import MAX_TAGS, tag_line
from bot.topics.tldr import MAX_CHARS as TLDR_CHARS
from bot.topics.tldr import shorten_words, tldr


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of each field a card shows: characters of text, or a number of items (the rest
    counted as "+N"). Together they keep a card under about 2,000 characters of plain text, so
    one card always fits one message on every platform."""

    title: int = 300  # the title, or the paper's id when there is none
    authors: int = 3  # names, then "+N"
    author: int = 80  # characters of one name
    category: int = 32  # the primary category; real ones are at most 17
    affiliations: int = 3  # distinct ones, in author order
    affiliation: int = 80
    tags: int = MAX_TAGS  # a line built elsewhere may be longer than `tag_line` makes it
    tag: int = 60
    tldr: int = TLDR_CHARS  # what `bot.topics.tldr` writes at most; one from elsewhere is cut


LIMITS = Limits()
AUTHOR_MARK = "👤"  # before a followed author's name


def shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ending in "…" when it was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Title:
    text: str
    url: str  # the paper's page; platforms with links put it on the title


@dataclass(frozen=True, slots=True)
class Byline:
    paper_id: str  # what `/why` takes: "arXiv:2607.17299", "arXiv:2607.17299v2", "sample:..."
    text: str  # "authors +N · primary category · announced date", or ""

    @property
    def plain(self) -> str:
        """The whole line as plain text: the id, then the rest."""
        return " · ".join(part for part in (self.paper_id, self.text) if part)


@dataclass(frozen=True, slots=True)
class Affiliations:
    text: str


@dataclass(frozen=True, slots=True)
class Tag:
    name: str
    followed: bool  # a tag the chat follows: platforms mark it


@dataclass(frozen=True, slots=True)
class Tags:
    tags: tuple[Tag, ...]
    more: int  # tags not shown, as "+N" (`/why` lists them)

    @property
    def suffix(self) -> str:
        return f" +{self.more}" if self.more else ""


@dataclass(frozen=True, slots=True)
class Summary:
    text: str  # the TL;DR


@dataclass(frozen=True, slots=True)
class Links:
    abs_url: str
    pdf_url: str | None  # offered with a TL;DR (alerts), not in compact lists


Field = Title | Byline | Affiliations | Tags | Summary | Links


@dataclass(frozen=True, slots=True)
class Card:
    """A paper's card: its fields in display order, empty ones left out; always a title first,
    then the byline (at least the paper's id), and the links last."""

    fields: tuple[Field, ...]


def card(item: PaperItem) -> Card:
    """The card of a paper as `item` shows it, every field within `LIMITS`."""
    limits, paper = LIMITS, item.paper
    fields: list[Field | None] = [
        Title(shorten(display(paper.title) or paper.shown_id, limits.title), paper.abs_url),
        _byline(paper, limits),
        _affiliations(paper, limits),
        _tags(item, limits),
        Summary(shorten_words(display(item.tldr), limits.tldr)) if item.tldr else None,
        Links(paper.abs_url, paper.pdf_url if item.tldr else None),
    ]
    return Card(tuple(f for f in fields if f is not None))


def _byline(paper: Paper, limits: Limits) -> Byline:
    names = paper.author_names
    authors = ", ".join(shorten(display(n), limits.author) for n in names[: limits.authors])
    if len(names) > limits.authors:
        authors += f" +{len(names) - limits.authors}"
    category = shorten(paper.primary_category or "", limits.category)
    day = paper.announced.isoformat() if paper.announced else ""
    text = " · ".join(part for part in (authors, category, day) if part)
    return Byline(paper.shown_id, text)


def _affiliations(paper: Paper, limits: Limits) -> Affiliations | None:
    seen = dict.fromkeys(a for author in paper.authors for a in author.affiliations)
    shown = [shorten(display(a), limits.affiliation) for a in list(seen)[: limits.affiliations]]
    return Affiliations(" · ".join(shown)) if shown else None


def _tags(item: PaperItem, limits: Limits) -> Tags | None:
    names = item.tags[: limits.tags]
    if not names:
        return None
    tags = tuple(Tag(shorten(n, limits.tag), n in item.followed_tags) for n in names)
    return Tags(tags, item.more_tags + len(item.tags) - len(names))


def tag_name(catalog: Catalog, tag: str, subs: Sequence[Subscription] = ()) -> str:
    """What a person calls a tag: the topic's name, the query they typed, or the author
    they follow, marked "👤" wherever it is shown (tag lines, alerts, digests, /why)."""
    topic = catalog.by_slug(tag)
    if topic is not None:
        return topic.name
    sub = next((sub for sub in subs if sub.tag == tag), None)
    if sub is None:
        return tag
    return f"{AUTHOR_MARK} {sub.label}" if sub.kind is SubscriptionKind.AUTHOR else sub.label


def paper_item(
    catalog: Catalog,
    paper: Paper,
    followed: Collection[str],
    subs: Sequence[Subscription] = (),
    *,
    summary: bool = False,
) -> PaperItem:
    """`paper` as shown to a chat that follows the tags `followed` through `subs`: its tag line
    (followed tags first, then the most specific others: `bot.topics.tagline`) under the names
    the chat knows, and with `summary` a TL;DR of its abstract."""
    order = [*(s.tag for s in subs if s.tag in followed), *sorted(followed)]
    line = tag_line(catalog, paper.tags, list(dict.fromkeys(order)))
    return PaperItem(
        paper=paper,
        tags=tuple(tag_name(catalog, t, subs) for t in line.shown),
        followed_tags=tuple(tag_name(catalog, t, subs) for t in line.followed),
        more_tags=line.hidden,
        tldr=tldr(paper.abstract) if summary else "",
    )
