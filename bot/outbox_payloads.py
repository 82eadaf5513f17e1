"""The outbox's records: a row's kind and status, the claimed item, and what it says (one
frozen payload type per kind); stdlib only, like `bot.domain`.

A row's payload says what to send and how far sending got. Papers come in batches:
a row made by an ingest names its `batches`, which the worker resolves into the
chat's `papers` (after mutes) the first time it claims the row, and then keeps
(`batches` None means resolved). Storage alone turns these into the JSON column
(`storage.outbox_json`); everything else sees only these types.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


class OutboxKind(enum.StrEnum):
    """What an outbox row owes a chat; its payload type follows (below)."""

    ITEM = "item"  # a batch's papers, waiting for the chat's digest
    ALERT = "alert"  # a batch's papers, one message each, sent when due
    DIGEST = "digest"  # the chat's folded items, one message
    SPIKE = "spike"  # a notice: a followed topic is heating up
    NOTE = "note"  # a notice: why a digest has nothing new


class OutboxStatus(enum.StrEnum):
    """pending -> sending (claimed) -> pending (more to send) | sent | dead; an item
    folded into a digest stays "folded"."""

    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"
    DEAD = "dead"
    FOLDED = "folded"


@dataclass(frozen=True, slots=True)
class ItemPayload:
    """Papers waiting for the chat's digest (kind "item"); folded into a digest when
    it falls due, or turned into an alert when the chat switches to instant."""

    batches: tuple[int, ...] | None = None
    papers: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class AlertPayload:
    """One message a paper, sent when due (kind "alert"); `sent` counts those done."""

    batches: tuple[int, ...] | None = None
    papers: tuple[int, ...] = ()
    sent: int = 0


@dataclass(frozen=True, slots=True)
class DigestPayload:
    """A chat's folded items as one message, sent part by part (kind "digest");
    `parts_sent` counts the parts done."""

    batches: tuple[int, ...] | None = None
    papers: tuple[int, ...] = ()
    parts_sent: int = 0


@dataclass(frozen=True, slots=True)
class NoticePayload:
    """A message about no one paper (kinds "spike" and "note", which differ only in
    why they were queued), sent part by part; `parts_sent` counts the parts done."""

    text: str
    parts_sent: int = 0


OutboxPayload = ItemPayload | AlertPayload | DigestPayload | NoticePayload


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """A claimed outbox row: what it owes the chat, and its failures in a row so far."""

    id: int
    chat_id: int
    batch_id: int | None
    kind: OutboxKind
    payload: OutboxPayload  # the type that goes with `kind`
    attempts: int
    # When the current run of failures began; None when the last try succeeded.
    failing_since: datetime | None = None


@dataclass(frozen=True, slots=True)
class Progress:
    """What a claim got done: the row's new payload, and whether anything is left."""

    item_id: int
    payload: OutboxPayload
    done: bool
