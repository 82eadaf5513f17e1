"""Repositories: take a session, speak domain objects, never commit.

Only the unit of work (`storage.uow`) commits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import (
    Chat,
    ChatKind,
    ChatRef,
    DigestMode,
    Platform,
    PollState,
    Subscription,
    SubscriptionKind,
)
from storage.models import (
    ChatRow,
    MutedTagRow,
    PollStateRow,
    SubscriptionRow,
)

# Bound parameters per statement stay well below SQLite's and asyncpg's limits.
_CHUNK = 500


def chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    """Slices of `items` small enough for one statement's bound parameters."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- chats -------------------------------------------------------------------------


def _chat(row: Any) -> Chat:
    """A `ChatRow`, or a plain row of the chats table (cheaper to load: see `by_ids`)."""
    external = row.external_id if row.external_id is not None else row.external_key
    return Chat(
        id=row.id,
        platform=Platform(row.platform),
        external_id=str(external),
        kind=ChatKind(row.kind),
        timezone=row.timezone,
        digest_mode=DigestMode(row.digest_mode),
        digest_time=row.digest_time,
        digest_weekday=row.digest_weekday,
        paused=row.paused,
        active=row.active,
        quiet_start=row.quiet_start,
        quiet_end=row.quiet_end,
        momentum_alerts=row.momentum_alerts,
        empty_digest_note=row.empty_digest_note,
        learned_filter=row.learned_filter,
        next_digest_at=row.next_digest_at,
        created_at=row.created_at,
    )


def _identity(ref: ChatRef) -> dict[str, Any]:
    """Numeric platform ids are stored as 64-bit integers, anything else as text."""
    try:
        number = int(ref.external_id)
    except ValueError:
        number = None
    if number is not None and -(2**63) <= number < 2**63 and ref.platform != Platform.SLACK:
        return {"external_id": number, "external_key": None}
    return {"external_id": None, "external_key": ref.external_id}


class ChatRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def _row(self, ref: ChatRef) -> ChatRow | None:
        ident = _identity(ref)
        column = ChatRow.external_id if ident["external_id"] is not None else ChatRow.external_key
        value = ident["external_id"] if ident["external_id"] is not None else ident["external_key"]
        stmt = select(ChatRow).where(ChatRow.platform == ref.platform.value, column == value)
        return (await self._s.execute(stmt)).scalar_one_or_none()

    async def get(self, ref: ChatRef) -> Chat | None:
        row = await self._row(ref)
        return _chat(row) if row else None

    async def get_by_id(self, chat_id: int) -> Chat | None:
        row = await self._s.get(ChatRow, chat_id)
        return _chat(row) if row else None

    async def by_ids(self, chat_ids: Iterable[int]) -> dict[int, Chat]:
        found: dict[int, Chat] = {}
        for chunk in chunks(list(set(chat_ids))):
            # Plain rows, not ORM objects: the delivery worker loads a chat for every message
            # it sends and only reads it, so the identity map and instance state are waste.
            rows = await self._s.execute(select(ChatRow.__table__).where(ChatRow.id.in_(chunk)))
            found.update({row.id: _chat(row) for row in rows})
        return found

    async def get_or_create(self, ref: ChatRef, kind: ChatKind = ChatKind.PRIVATE) -> Chat:
        row = await self._row(ref)
        if row is None:
            row = ChatRow(platform=ref.platform.value, kind=kind.value, **_identity(ref))
            self._s.add(row)
            await self._s.flush()
        return _chat(row)

    async def set_active(self, chat_id: int, active: bool) -> None:
        await self._s.execute(update(ChatRow).where(ChatRow.id == chat_id).values(active=active))

    async def update(self, chat_id: int, **values: Any) -> None:
        """Change settings columns (digest_mode, timezone, paused, quiet_start, ...)."""
        unknown = set(values) - _CHAT_SETTINGS
        if unknown:
            raise ValueError(f"not chat settings: {sorted(unknown)}")
        await self._s.execute(update(ChatRow).where(ChatRow.id == chat_id).values(**values))

    async def move(self, ref: ChatRef, new_ref: ChatRef) -> bool:
        """A group became a supergroup: keep everything under its new id."""
        row = await self._row(ref)
        if row is None or await self._row(new_ref) is not None:
            return False
        ident = _identity(new_ref)
        row.external_id, row.external_key = ident["external_id"], ident["external_key"]
        await self._s.flush()
        return True

    async def with_momentum_alerts(self) -> list[int]:
        """Active chats that want spike alerts."""
        stmt = select(ChatRow.id).where(ChatRow.active, ChatRow.momentum_alerts)
        return list((await self._s.execute(stmt)).scalars())

    async def due_for_digest(self, now: datetime, limit: int = 500) -> list[Chat]:
        stmt = (
            select(ChatRow)
            .where(ChatRow.next_digest_at <= now, ChatRow.active)
            .order_by(ChatRow.next_digest_at)
            .limit(limit)
        )
        return [_chat(r) for r in (await self._s.execute(stmt)).scalars()]


_CHAT_SETTINGS = {
    "kind",
    "timezone",
    "digest_mode",
    "digest_time",
    "digest_weekday",
    "paused",
    "active",
    "quiet_start",
    "quiet_end",
    "momentum_alerts",
    "empty_digest_note",
    "learned_filter",
    "next_digest_at",
}


# --- subscriptions -----------------------------------------------------------------


class FollowedQuery(NamedTuple):
    """A distinct followed query: its canonical text and the first subscription to it
    (named in logs when the text no longer compiles)."""

    target: str
    subscription_id: int


def _subscription(row: Any) -> Subscription:
    """A `SubscriptionRow`, or a plain row of the subscriptions table."""
    return Subscription(
        id=row.id,
        chat_id=row.chat_id,
        kind=SubscriptionKind(row.kind),
        target=row.target,
        label=row.label,
        tag=row.tag,
        created_at=row.created_at,
    )


class SubscriptionRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def add(
        self, chat_id: int, kind: SubscriptionKind, target: str, label: str, tag: str
    ) -> tuple[Subscription, bool]:
        """Follow `target`; returns (subscription, created). Following twice is a no-op."""
        stmt = select(SubscriptionRow).where(
            SubscriptionRow.chat_id == chat_id,
            SubscriptionRow.kind == kind.value,
            SubscriptionRow.target == target,
        )
        row = (await self._s.execute(stmt)).scalar_one_or_none()
        if row is not None:
            return _subscription(row), False
        row = SubscriptionRow(chat_id=chat_id, kind=kind.value, target=target, label=label, tag=tag)
        self._s.add(row)
        await self._s.flush()
        return _subscription(row), True

    async def remove(self, chat_id: int, kind: SubscriptionKind, target: str) -> bool:
        result = await self._s.execute(
            delete(SubscriptionRow).where(
                SubscriptionRow.chat_id == chat_id,
                SubscriptionRow.kind == kind.value,
                SubscriptionRow.target == target,
            )
        )
        return bool(result.rowcount)

    async def query_targets(
        self, kind: SubscriptionKind = SubscriptionKind.QUERY
    ) -> list[FollowedQuery]:
        """Every distinct custom query (or followed author) of an active chat, once each."""
        stmt = (
            select(SubscriptionRow.target, func.min(SubscriptionRow.id))
            .join(ChatRow, ChatRow.id == SubscriptionRow.chat_id)
            .where(SubscriptionRow.kind == kind.value, ChatRow.active)
            .group_by(SubscriptionRow.target)
            .order_by(SubscriptionRow.target)
        )
        return [FollowedQuery(target, first) for target, first in await self._s.execute(stmt)]

    async def count_by_kind(self, chat_id: int) -> dict[SubscriptionKind, int]:
        """How many topics and queries a chat follows (for the per-chat limits)."""
        stmt = (
            select(SubscriptionRow.kind, func.count())
            .where(SubscriptionRow.chat_id == chat_id)
            .group_by(SubscriptionRow.kind)
        )
        counts = dict.fromkeys(SubscriptionKind, 0)
        for kind, number in await self._s.execute(stmt):
            counts[SubscriptionKind(kind)] = int(number)
        return counts

    async def for_chats(self, chat_ids: Iterable[int]) -> dict[int, list[Subscription]]:
        found: dict[int, list[Subscription]] = {}
        for chunk in chunks(list(set(chat_ids))):
            stmt = (
                select(SubscriptionRow.__table__)  # plain rows, as in ChatRepository.by_ids
                .where(SubscriptionRow.chat_id.in_(chunk))
                .order_by(SubscriptionRow.created_at, SubscriptionRow.id)
            )
            for row in await self._s.execute(stmt):
                found.setdefault(row.chat_id, []).append(_subscription(row))
        return found

    async def for_chat(self, chat_id: int) -> list[Subscription]:
        stmt = (
            select(SubscriptionRow)
            .where(SubscriptionRow.chat_id == chat_id)
            .order_by(SubscriptionRow.created_at, SubscriptionRow.id)
        )
        return [_subscription(r) for r in (await self._s.execute(stmt)).scalars()]


class MuteRepository:
    """Muted tags; scope "" applies to every subscription, else to the one with that tag."""

    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def add(self, chat_id: int, tag: str, scope: str = "") -> bool:
        stmt = select(MutedTagRow.id).where(
            MutedTagRow.chat_id == chat_id, MutedTagRow.tag == tag, MutedTagRow.scope == scope
        )
        if (await self._s.execute(stmt)).first() is not None:
            return False
        self._s.add(MutedTagRow(chat_id=chat_id, tag=tag, scope=scope))
        await self._s.flush()
        return True

    async def remove(self, chat_id: int, tag: str) -> int:
        """Unmute a tag everywhere it is muted in this chat."""
        result = await self._s.execute(
            delete(MutedTagRow).where(MutedTagRow.chat_id == chat_id, MutedTagRow.tag == tag)
        )
        return int(result.rowcount or 0)

    async def for_chats(self, chat_ids: Iterable[int]) -> dict[int, list[tuple[str, str]]]:
        found: dict[int, list[tuple[str, str]]] = {}
        for chunk in chunks(list(set(chat_ids))):
            stmt = select(MutedTagRow.chat_id, MutedTagRow.tag, MutedTagRow.scope).where(
                MutedTagRow.chat_id.in_(chunk)
            )
            for chat_id, tag, scope in (await self._s.execute(stmt)).all():
                found.setdefault(chat_id, []).append((tag, scope))
        return found

    async def for_chat(self, chat_id: int) -> list[tuple[str, str]]:
        stmt = select(MutedTagRow.tag, MutedTagRow.scope).where(MutedTagRow.chat_id == chat_id)
        return [(tag, scope) for tag, scope in (await self._s.execute(stmt)).all()]


# --- poll state --------------------------------------------------------------------


class PollStateRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def get(self, source: str) -> PollState | None:
        row = await self._s.get(PollStateRow, source)
        if row is None:
            return None
        return PollState(
            source=row.source,
            watermark=row.watermark,
            etag=row.etag,
            last_modified=row.last_modified,
            last_announced=row.last_announced,
            last_count=row.last_count,
            last_success_at=row.last_success_at,
            last_attempt_at=row.last_attempt_at,
            last_error=row.last_error,
        )

    async def save(self, state: PollState) -> None:
        row = await self._s.get(PollStateRow, state.source)
        if row is None:
            row = PollStateRow(source=state.source)
            self._s.add(row)
        for name in PollState.__dataclass_fields__:
            setattr(row, name, getattr(state, name))
        await self._s.flush()

    async def all(self) -> list[PollState]:
        rows = (await self._s.execute(select(PollStateRow.source))).scalars().all()
        return [s for s in [await self.get(source) for source in rows] if s is not None]
