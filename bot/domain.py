"""The vocabulary of paperwatch: small frozen value objects, stdlib only.

Everything that crosses a boundary (parser -> storage, storage -> handlers,
handlers -> adapters) is one of these, never an ORM row or an SDK object.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import date, datetime

# New-style ids (0704.0001 .. 2609.26811) and old-style ids (cond-mat/0412498).
_NEW_ID = re.compile(r"(?P<id>\d{4}\.\d{4,5})(?:v(?P<v>\d+))?")
_OLD_ID = re.compile(r"(?P<id>[a-z][a-z.-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<v>\d+))?")


def split_arxiv_id(raw: str) -> tuple[str, int | None]:
    """Return (version-free id, version or None) from any arXiv id or URL form.

    Accepts "2609.26811v2", "arXiv:2609.26811", "oai:arXiv.org:2609.26811v1",
    "https://arxiv.org/abs/cond-mat/0412498v1" and the like.
    Raises ValueError for text that holds no arXiv id.
    """
    text = raw.strip()
    for prefix in ("oai:arXiv.org:", "arXiv:", "arxiv:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = re.sub(r"^https?://(?:export\.)?arxiv\.org/(?:abs|pdf)/", "", text)
    text = text.removesuffix(".pdf")
    for pattern in (_NEW_ID, _OLD_ID):
        m = pattern.fullmatch(text)
        if m:
            v = m.group("v")
            return m.group("id"), int(v) if v else None
    raise ValueError(f"not an arXiv id: {raw!r}")


_SAMPLE_KEY = re.compile(r"sample:[a-z0-9]+(?:-[a-z0-9]+)*")


def paper_key(raw: str) -> str:
    """The key a paper is stored under, from what a person typed: an arXiv id in any form
    `split_arxiv_id` takes (the version dropped), or a bundled sample paper's key as its card
    shows it ("sample:evisd-evidence-conditioned-self-distillation-for-search").
    Raises ValueError for anything else."""
    text = raw.strip()
    if _SAMPLE_KEY.fullmatch(text.lower()):
        return text.lower()
    return split_arxiv_id(text)[0]


class AnnounceType(enum.StrEnum):
    """How a daily listing presented an entry (`arxiv:announce_type`)."""

    NEW = "new"
    CROSS = "cross"
    REPLACE = "replace"
    REPLACE_CROSS = "replace-cross"

    @property
    def is_new_paper(self) -> bool:
        return self in (AnnounceType.NEW, AnnounceType.CROSS)


@dataclass(frozen=True, slots=True)
class Author:
    name: str
    affiliations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Paper:
    """One arXiv paper at its latest known version.

    `arxiv_id` is version-free. Bundled sample papers whose arXiv id is unknown
    carry a `sample:` key instead (see `is_sample`).
    """

    arxiv_id: str
    title: str
    abstract: str = ""
    version: int = 1
    authors: tuple[Author, ...] = ()
    categories: tuple[str, ...] = ()  # primary first
    announced: date | None = None  # the listing date this paper was announced on
    submitted: datetime | None = None  # first version's submission (aware)
    updated: datetime | None = None  # latest version's date (aware)
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None
    announce_type: AnnounceType = AnnounceType.NEW
    # Curated tags that travel with the paper (sample data); the tagger adds its own.
    tags: tuple[str, ...] = ()

    @property
    def is_sample(self) -> bool:
        return self.arxiv_id.startswith("sample:")

    @property
    def shown_id(self) -> str:
        """The id a chat is shown, in a form `/why` takes (`paper_key`): "arXiv:2607.17299",
        with the version once it is past the first ("arXiv:2607.17299v2": a first version may
        only be the default of a record that named none), or the sample key."""
        if self.is_sample:
            return self.arxiv_id
        return f"arXiv:{self.arxiv_id}" + (f"v{self.version}" if self.version > 1 else "")

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    @property
    def abs_url(self) -> str:
        if self.is_sample:
            return "https://arxiv.org/search/?searchtype=title&query=" + _url_quote(self.title)
        return f"https://arxiv.org/abs/{self.arxiv_id}"

    @property
    def pdf_url(self) -> str | None:
        return None if self.is_sample else f"https://arxiv.org/pdf/{self.arxiv_id}v{self.version}"

    @property
    def author_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.authors)


def _url_quote(text: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(text[:300])


class Platform(enum.StrEnum):
    CONSOLE = "console"
    TELEGRAM = "telegram"
    SLACK = "slack"


class ChatKind(enum.StrEnum):
    PRIVATE = "private"
    GROUP = "group"
    CHANNEL = "channel"


class DigestMode(enum.StrEnum):
    INSTANT = "instant"
    DAILY = "daily"
    WEEKLY = "weekly"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Identifies a conversation on a platform (external id is a 64-bit int or a string)."""

    platform: Platform
    external_id: str


@dataclass(frozen=True, slots=True)
class Chat:
    id: int
    platform: Platform
    external_id: str
    kind: ChatKind = ChatKind.PRIVATE
    timezone: str = "UTC"
    digest_mode: DigestMode = DigestMode.DAILY
    digest_time: str = "08:00"  # HH:MM local
    digest_weekday: int = 0  # Monday, for weekly digests
    paused: bool = False
    active: bool = True
    quiet_start: str | None = None  # HH:MM local: instant alerts wait until quiet_end
    quiet_end: str | None = None
    momentum_alerts: bool = True
    empty_digest_note: bool = False  # a one-line note when a digest has nothing new
    learned_filter: bool = False  # instant alerts the chat's 👍/👎 model rejects are held back
    next_digest_at: datetime | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Topic:
    """A catalog topic. `rule` is a query in the topic query language."""

    slug: str
    name: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    parent: str | None = None  # parent slug
    rule: str = ""


class SubscriptionKind(enum.StrEnum):
    TOPIC = "topic"  # a catalog topic, by slug
    QUERY = "query"  # a custom query in the topic query language
    AUTHOR = "author"  # a followed author, by canonical name (`bot.topics.authors`)
    LIKE = "like"  # papers like a set, by the set's tag (`bot.topics.like`, table like_sets)


@dataclass(frozen=True, slots=True)
class Subscription:
    id: int
    chat_id: int
    kind: SubscriptionKind
    target: str  # topic slug or canonical query text
    label: str  # what the person sees: topic name or the query as typed
    tag: str = ""  # the paper tag it follows: the slug, or the query's key
    created_at: datetime | None = None


class Role(enum.IntEnum):
    """Who sent a command, as far as changing the chat goes; ordered by privilege.

    The default everywhere is MEMBER, the least privilege: a caller whose role was not
    established may read but not change anything (`handlers.base.Registry.dispatch`).
    """

    MEMBER = 0  # anyone in the chat: read-only commands
    ADMIN = 1  # an administrator of a group or channel (or anyone, where the operator allows)
    OWNER = 2  # the person a private chat or DM belongs to; the console's operator

    @property
    def may_change(self) -> bool:
        return self >= Role.ADMIN


@dataclass(frozen=True, slots=True)
class Command:
    """A chat command, already stripped of platform details."""

    name: str  # lower case, without the leading slash
    args: str  # the rest of the line, stripped
    chat: ChatRef
    chat_kind: ChatKind = ChatKind.PRIVATE
    user_id: str | None = None
    role: Role = Role.MEMBER  # as resolved by the adapter; dispatch may look it up lazily


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True, slots=True)
class PaperItem:
    """A paper as shown in a reply: what each adapter renders in its own markup."""

    paper: Paper
    tags: tuple[str, ...] = ()
    followed_tags: tuple[str, ...] = ()
    more_tags: int = 0  # tags not in `tags` (shown as "+N"; /why lists them)
    tldr: str = ""  # a sentence or two from the abstract; shown in alerts and digests


@dataclass(frozen=True, slots=True)
class Section:
    """A heading with its papers, e.g. one followed topic in a digest, or with paragraphs of
    its own (`lines`, e.g. the reasons `/why` gives under the paper's card)."""

    heading: str
    papers: tuple[PaperItem, ...] = ()
    footer: str | None = None
    note: str | None = None  # a line under the heading, e.g. the topic's momentum
    lines: tuple[str, ...] = ()  # paragraphs under the note, before the papers


class Action(enum.StrEnum):
    """What a button does: the chat command of the same name, with its argument (a tag or id)."""

    FOLLOW = "follow"
    UNFOLLOW = "unfollow"
    MUTE = "mute"
    WHY = "why"
    LATEST = "latest"
    ASK = "ask"  # opens a question about the topic (a prompt or a form), then /ask <tag>: ...
    MORE = "more"  # 👍 on a paper (its arXiv id): the chat's learned model (`handlers.feedback`)
    LESS = "less"  # 👎


@dataclass(frozen=True, slots=True)
class Button:
    text: str
    action: Action
    arg: str


@dataclass(frozen=True, slots=True)
class Reply:
    """What a handler answers. Adapters render it; text is plain, never markup.

    `lines` are paragraphs of plain text; `papers` are listed after them, then the
    `sections`; `buttons` are rows of actions for platforms that have buttons.
    `changes_chat` tells Slack to answer in the channel rather than ephemerally.
    """

    lines: tuple[str, ...] = ()
    papers: tuple[PaperItem, ...] = ()
    sections: tuple[Section, ...] = ()
    footer: str | None = None
    is_error: bool = False
    buttons: tuple[tuple[Button, ...], ...] = ()
    changes_chat: bool = False
    chart: str | None = None  # a topic tag whose momentum chart image platforms attach
    denied: bool = False  # refused: the caller may not do this here (or not this fast)

    @property
    def is_empty(self) -> bool:
        """Nothing to say: adapters send nothing (e.g. a flood already told to wait)."""
        return not (self.lines or self.papers or self.sections or self.footer or self.buttons)

    @classmethod
    def text(cls, *lines: str, is_error: bool = False) -> Reply:
        return cls(lines=tuple(lines), is_error=is_error)


@dataclass(frozen=True, slots=True)
class PollState:
    """Where an arXiv source got to, and how its last attempt went."""

    source: str
    watermark: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    last_announced: date | None = None
    last_count: int = 0
    last_success_at: datetime | None = None
    last_attempt_at: datetime | None = None
    last_error: str | None = None


@dataclass(frozen=True, slots=True)
class Process:
    """A running process, seen alive at its last heartbeat (`bot.services.peers`)."""

    id: str
    role: str
    started_at: datetime
    seen_at: datetime


_SLUG_JUNK = re.compile(r"[^a-z0-9]+")


def slugify(name: str) -> str:
    """ "RL for LLM Agents" -> "rl-for-llm-agents" (the catalog's slug rule)."""
    return _SLUG_JUNK.sub("-", name.lower()).strip("-")
