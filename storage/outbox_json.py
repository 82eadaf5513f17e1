"""The outbox payloads as the JSON column holds them: the only place that knows the keys.

The shapes are those rows have always had, so old rows read and new rows are written
exactly as before (key order included, for the rows the current code writes):

    item, alert   {"batches": [3]}  (as queued)  ->  {"papers": [7, 9]}  (resolved)
                  -> {"papers": [7, 9], "sent": 1}  (alerts done)
    digest        {"batches": [3, 4], "papers": [], "parts_sent": 0}  (as folded)
                  -> {"parts_sent": 0, "papers": [7, 9]}  (resolved; then parts done)
    spike, note   {"text": "..."}  -> {"text": "...", "parts_sent": 1}

Items and alerts share one shape, since a chat switching to instant alerts turns its
items into alerts by their kind alone. Rows queued one per paper, before batches, were
migrated to an explicit {"papers": [id]} (revision 0005) and read as resolved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from bot.outbox_payloads import (
    AlertPayload,
    DigestPayload,
    ItemPayload,
    NoticePayload,
    OutboxItem,
    OutboxKind,
    OutboxPayload,
)


def _ids(values: Iterable[Any]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _batches(data: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The batches still to resolve; None when the key is absent (resolved)."""
    return _ids(data["batches"]) if "batches" in data else None


def item_from_json(data: Mapping[str, Any] | None) -> ItemPayload:
    """The payload of an "item" row (the digest fold reads these)."""
    data = data or {}
    return ItemPayload(_batches(data), _ids(data.get("papers", ())))


def payload_from_json(kind: OutboxKind | str, data: Mapping[str, Any] | None) -> OutboxPayload:
    """The typed payload of a row of `kind`, from its JSON column (absent keys default)."""
    data = data or {}
    papers = _ids(data.get("papers", ()))
    match OutboxKind(kind):
        case OutboxKind.ITEM:
            return item_from_json(data)
        case OutboxKind.ALERT:
            return AlertPayload(_batches(data), papers, int(data.get("sent", 0)))
        case OutboxKind.DIGEST:
            return DigestPayload(_batches(data), papers, int(data.get("parts_sent", 0)))
        case OutboxKind.SPIKE | OutboxKind.NOTE:
            return NoticePayload(str(data.get("text") or ""), int(data.get("parts_sent", 0)))
    raise ValueError(f"unknown outbox kind {kind!r}")  # pragma: no cover


def outbox_item(
    item_id: int,
    chat_id: int,
    batch_id: int | None,
    kind: str,
    payload: Mapping[str, Any] | None,
    attempts: int,
    failing_since: datetime | None,
) -> OutboxItem:
    """A claimed row (its columns in this order) as the domain sees it, kind and payload
    typed."""
    typed = OutboxKind(kind)
    payload_of = payload_from_json(typed, payload)
    return OutboxItem(item_id, chat_id, batch_id, typed, payload_of, attempts, failing_since)


def payload_to_json(payload: OutboxPayload) -> dict[str, Any]:
    """The JSON column for `payload`, in the shape (and key order) written so far."""
    match payload:
        case ItemPayload() | AlertPayload():
            data: dict[str, Any] = {}
            if payload.batches is not None:
                data["batches"] = list(payload.batches)
            if payload.batches is None or payload.papers:
                data["papers"] = list(payload.papers)
            if isinstance(payload, AlertPayload) and payload.sent:
                data["sent"] = payload.sent
            return data
        case DigestPayload(batches=None):
            return {"parts_sent": payload.parts_sent, "papers": list(payload.papers)}
        case DigestPayload(batches=batches):
            return {
                "batches": list(batches or ()),
                "papers": list(payload.papers),
                "parts_sent": payload.parts_sent,
            }
        case NoticePayload():
            data = {"text": payload.text}
            if payload.parts_sent:
                data["parts_sent"] = payload.parts_sent
            return data
    raise TypeError(f"not an outbox payload: {payload!r}")  # pragma: no cover
