"""What an outbox row says, one frozen type per kind (stdlib only, like `bot.domain`).

A row's payload says what to send and how far sending got. Papers come in batches:
a row made by an ingest names its `batches`, which the worker resolves into the
chat's `papers` (after mutes) the first time it claims the row, and then keeps
(`batches` None means resolved). Storage alone turns these into the JSON column
(`storage.outbox_json`); everything else sees only these types.
"""

from __future__ import annotations

from dataclasses import dataclass


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
