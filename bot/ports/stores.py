"""The repositories a unit of work holds (all but the outbox), as protocols.

Each method takes and returns domain objects (`bot.domain`, `bot.topics.momentum`,
`bot.topics.spike_rule`) or `UpsertResult`, a plain record defined here because it is
part of this contract; storage implements them with SQL, `tests.support.uow` in memory
where that stays simple (see there which parts it leaves to the database tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

from bot.domain import (
    Chat,
    ChatKind,
    ChatRef,
    Paper,
    PollState,
    Process,
    Subscription,
    SubscriptionKind,
)
from bot.topics.momentum import Momentum
from bot.topics.search_text import SearchResult
from bot.topics.spike_rule import AlertState


class ChatStore(Protocol):
    """Chats and their settings, found by platform reference or by id."""

    async def get(self, ref: ChatRef) -> Chat | None: ...

    async def get_by_id(self, chat_id: int) -> Chat | None: ...

    async def by_ids(self, chat_ids: Iterable[int]) -> Mapping[int, Chat]:
        """The chats of these ids that exist, by id (the outbox worker's batch load)."""
        ...

    async def get_or_create(self, ref: ChatRef, kind: ChatKind = ChatKind.PRIVATE) -> Chat: ...

    async def update(self, chat_id: int, **values: Any) -> None:
        """Change settings: any field of `Chat` but `id`, `platform`, `external_id` and
        `created_at` (anything else raises ValueError)."""
        ...

    async def set_active(self, chat_id: int, active: bool) -> None: ...

    async def move(self, ref: ChatRef, new_ref: ChatRef) -> bool:
        """Give a chat a new reference (a Telegram group became a supergroup); False when
        it is unknown or the new reference is taken."""
        ...

    async def with_momentum_alerts(self) -> Sequence[int]:
        """The ids of the active chats that want spike alerts."""
        ...

    async def due_for_digest(self, now: datetime, limit: int = 500) -> Sequence[Chat]:
        """Active chats whose `next_digest_at` is `now` or earlier, longest due first,
        at most `limit` of them."""
        ...


class SubscriptionStore(Protocol):
    """What each chat follows; one subscription per (chat, kind, target)."""

    async def add(
        self, chat_id: int, kind: SubscriptionKind, target: str, label: str, tag: str
    ) -> tuple[Subscription, bool]:
        """(the subscription, whether it was created): following twice changes nothing."""
        ...

    async def remove(self, chat_id: int, kind: SubscriptionKind, target: str) -> bool: ...

    async def count_by_kind(self, chat_id: int) -> Mapping[SubscriptionKind, int]:
        """Every kind, zero included."""
        ...

    async def for_chat(self, chat_id: int) -> Sequence[Subscription]:
        """Oldest first."""
        ...

    async def for_chats(self, chat_ids: Iterable[int]) -> Mapping[int, Sequence[Subscription]]:
        """Each chat's subscriptions, oldest first; a chat that follows nothing is absent."""
        ...

    async def query_targets(
        self, kind: SubscriptionKind = SubscriptionKind.QUERY
    ) -> Sequence[tuple[str, int]]:
        """(canonical text, id of the first subscription to it) of every distinct query
        (with `kind` AUTHOR: followed author) an active chat follows, by text: what ingest
        tags papers with besides the catalog (`bot.topics.tag_rules.FollowedText`)."""
        ...


class MuteStore(Protocol):
    """Muted tags as (tag, scope); scope "" mutes everywhere, else within the followed
    subscription whose tag it is."""

    async def add(self, chat_id: int, tag: str, scope: str = "") -> bool: ...

    async def remove(self, chat_id: int, tag: str) -> int:
        """Unmute `tag` in every scope; how many mutes went."""
        ...

    async def for_chat(self, chat_id: int) -> Sequence[tuple[str, str]]:
        """In no particular order."""
        ...

    async def for_chats(self, chat_ids: Iterable[int]) -> Mapping[int, Sequence[tuple[str, str]]]:
        """`for_chat` of several chats; a chat without mutes is absent."""
        ...


@dataclass(frozen=True, slots=True)
class UpsertResult:
    """What storing a batch did (`PaperStore.upsert`), by version-free arXiv id."""

    new: tuple[str, ...]
    updated: tuple[str, ...]
    unchanged: tuple[str, ...]


class PaperStore(Protocol):
    """The paper index and its tags: what chat commands read, ingest writes and the
    outbox worker loads. Papers have an arXiv id and, once stored, a database id; each
    ingest's new papers form a batch, which the outbox rows of its alerts refer to."""

    async def get(self, arxiv_id: str) -> Paper | None: ...

    async def latest(
        self,
        tags: Sequence[str] | None = None,
        limit: int = 5,
        offset: int = 0,
        without: Sequence[str] = (),
    ) -> Sequence[Paper]:
        """Newest first (announced, then arXiv id, descending), with any of `tags` if given
        and none of `without`, `limit` of them after the first `offset`; each paper carries
        its stored tags, sorted."""
        ...

    async def count(self, tags: Sequence[str] | None = None, without: Sequence[str] = ()) -> int:
        """Papers stored, or those with any of `tags`, and none of `without`: as many as
        `latest` can page through."""
        ...

    async def extent(self, tags: Sequence[str] | None = None) -> tuple[int, date | None]:
        """How many papers are stored (or have any of `tags`), and the first day they
        cover: the earliest announcement date among them, or, when none has one, the day
        the first of them was stored; None when there are none."""
        ...

    async def tags_with_why(self, arxiv_id: str) -> Sequence[tuple[str, tuple[str, ...]]]:
        """(tag, the words that matched), by tag."""
        ...

    async def add_tags(
        self, tags: Iterable[tuple[str, str, Sequence[str]]], source: str = "rule"
    ) -> int:
        """Attach (arxiv id, tag, why) to stored papers, keeping pairs already there; how
        many were added."""
        ...

    async def upsert(self, papers: Iterable[Paper], *, sample: bool = False) -> UpsertResult:
        """Store papers by version-free id: insert new ones, move known ones to a newer
        version, ignore repeats (the highest version in a batch wins). `sample`: the
        bundled sample papers, which momentum never counts. Their `tags` are ignored
        (`add_tags` attaches tags)."""
        ...

    async def ids_for(self, arxiv_ids: Iterable[str]) -> Mapping[str, int]:
        """Database ids of the stored papers among `arxiv_ids`."""
        ...

    async def by_ids(self, paper_ids: Sequence[int]) -> Mapping[int, Paper]:
        """Papers (with their tags) by database id."""
        ...

    async def page(self, after: str | None, limit: int) -> Sequence[Paper]:
        """Up to `limit` papers in arXiv id order after `after`, for walking the index."""
        ...

    async def replace_rule_tags(
        self, arxiv_ids: Sequence[str], tags: Iterable[tuple[str, str, Sequence[str]]]
    ) -> int:
        """Drop the rule-made tags of these papers and attach `tags` (arxiv id, tag,
        why) instead, as retagging does; how many were attached."""
        ...

    async def new_since(self, since: datetime) -> int:
        """How many new papers ingests brought in after `since` (sample papers never
        count)."""
        ...

    async def batch_tags(
        self, batch_ids: Iterable[int]
    ) -> Mapping[int, Mapping[int, Sequence[str]]]:
        """The tags of every paper in these batches: batch -> paper id -> tags."""
        ...


class PaperSearch(Protocol):
    """Full-text search over the titles and abstracts of the stored papers."""

    async def search(
        self,
        text: str,
        *,
        tags: Sequence[str] | None = None,
        without: Sequence[str] = (),
        limit: int = 10,
        offset: int = 0,
    ) -> SearchResult:
        """The papers matching `text` (plain words, or the query language: read by
        `bot.topics.search_text.parse_search`, whose `QueryError` it raises), with any of
        `tags` if given and none of `without`: `limit` hits after the first `offset`, best
        first and newest first among equal scores (each paper with its tags, sorted), and
        how many papers match in all. Plain words that no paper has all of fall back to
        papers with any of them (`SearchResult.loosened`)."""
        ...

    async def index_new(self) -> int:
        """Add the papers stored in this unit of work to the index now (its commit does it
        otherwise; ingest does it while it tags); how many."""
        ...


class PollStateStore(Protocol):
    """Each source's watermark and last outcome (`bot.services.poll`)."""

    async def get(self, source: str) -> PollState | None: ...

    async def save(self, state: PollState) -> None:
        """Insert or replace the state of `state.source`."""
        ...

    async def all(self) -> Sequence[PollState]: ...


class MomentumStore(Protocol):
    """Weekly paper counts per tag (`bot.topics.momentum` has the rules), and each
    chat's spike alert state per tag (`bot.topics.spike_rule`)."""

    async def latest_announced(self, today: date | None = None) -> date | None: ...

    async def for_tags(
        self, tags: Sequence[str] | None, as_of: date, weeks: int = 26
    ) -> Mapping[str, Momentum]: ...

    async def for_tag(self, tag: str, as_of: date, weeks: int = 26) -> Momentum: ...

    async def alert_state(self, chat_id: int, tag: str) -> AlertState:
        """Armed and never alerted, unless saved otherwise."""
        ...

    async def save_alert_state(self, chat_id: int, tag: str, state: AlertState) -> None: ...


class ProcessStore(Protocol):
    """The `paperwatch run` processes alive, and their claims (`bot.services.peers`)."""

    async def beat(self, process_id: str, role: str, now: datetime) -> None:
        """The process is alive now (registered the first time)."""
        ...

    async def live(self, since: datetime) -> Sequence[Process]:
        """The processes seen at `since` or later, oldest first."""
        ...

    async def leave(self, process_id: str, now: datetime) -> None:
        """The process stopped: unregister it and release its outbox claims `now`."""
        ...

    async def forget(self, before: datetime, now: datetime) -> int:
        """Remove the processes last seen before `before` and release their outbox
        claims `now` (due again, the attempt taken back); how many claims."""
        ...
