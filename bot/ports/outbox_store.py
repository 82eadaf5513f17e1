"""The outbox as its users see it: ingest and the digest and spike jobs queue rows, the
outbox worker (`bot.services.deliver`) claims and settles them, chat commands release
what waited for a digest.

A row belongs to one chat and has a kind (`OutboxKind`) and a typed payload
(`bot.outbox_payloads`). A claim takes due rows for a lease, on behalf of a process
(`claimed_by`); every settlement of a claim (`record`, `retry_at`, `failed`,
`mark_dead`) changes a row only while that process still holds it. Only storage
implements this (row locks, compare-and-set, fan-out in SQL): the fake unit of work does
not, and the services that use it are tested on real databases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from bot.outbox_payloads import OutboxItem, OutboxKind, OutboxPayload, OutboxStatus, Progress


class OutboxStore(Protocol):
    async def enqueue_papers(self, paper_ids: Sequence[int], now: datetime) -> int:
        """Make the papers (database ids) one batch and give it to every chat it may
        reach; how many rows were written."""
        ...

    async def enqueue_notice(
        self, chat_id: int, kind: OutboxKind, text: str, now: datetime
    ) -> None:
        """A message not about one paper (a momentum spike, an empty digest's note),
        due now."""
        ...

    async def claim(
        self,
        now: datetime,
        lease: timedelta,
        limit: int,
        share: tuple[int, int] = (0, 1),
        claimed_by: str | None = None,
    ) -> Sequence[OutboxItem]:
        """Take up to `limit` due rows of active, unpaused chats for `lease`, by id.

        `share` (slot, workers): only rows of chats whose id is `slot` modulo `workers`.
        """
        ...

    async def save_payloads(self, payloads: Mapping[int, OutboxPayload]) -> None:
        """Replace the payloads of rows, by row id."""
        ...

    async def record(
        self, progress: Iterable[Progress], now: datetime, claimed_by: str | None = None
    ) -> None:
        """Save what claims got done (`bot.services.group_commit`): finished rows are sent,
        the rest due again now."""
        ...

    async def retry_at(
        self, item_id: int, when: datetime, why: str | None, claimed_by: str | None = None
    ) -> None:
        """Release the claim until `when` without counting a failure (a rate limit, quiet
        hours, a moved chat)."""
        ...

    async def failed(
        self,
        item_id: int,
        when: datetime,
        error: str,
        now: datetime,
        claimed_by: str | None = None,
    ) -> None:
        """A failed try: due again at `when`; a first failure starts `failing_since`."""
        ...

    async def mark_dead(self, item_id: int, error: str, claimed_by: str | None = None) -> None:
        """Give up on the row: dead, for the operator to see (and retry)."""
        ...

    async def fold_digest(
        self, chat_id: int, now: datetime, due: datetime | None, next_due: datetime | None
    ) -> int | None:
        """Take the chat's digest that fell due at `due` (moving it to `next_due`) and
        gather its waiting items into one digest row; how many items, or None when
        another process took that digest first."""
        ...

    async def counts(self) -> Mapping[OutboxStatus, int]:
        """Rows by status (a status with none is absent), for /metrics."""
        ...

    async def release_held(self, chat_id: int, now: datetime) -> None:
        """The chat switched to instant alerts: what waited for its digest is due now."""
        ...
