"""The outbox payloads and their JSON column: every kind round-trips, and rows in the
shapes written before the payloads were typed read (and write back) unchanged."""

from __future__ import annotations

import json

import pytest

from bot.outbox_payloads import (
    AlertPayload,
    DigestPayload,
    ItemPayload,
    NoticePayload,
    OutboxKind,
    OutboxPayload,
)
from storage.outbox_json import item_from_json, outbox_item, payload_from_json, payload_to_json

# Every kind, in each state its rows go through.
TYPED: list[tuple[OutboxKind, OutboxPayload]] = [
    (OutboxKind.ITEM, ItemPayload(batches=(3,))),
    (OutboxKind.ITEM, ItemPayload(papers=(12,))),
    (OutboxKind.ALERT, AlertPayload(batches=(3,))),
    (OutboxKind.ALERT, AlertPayload(batches=(3,), papers=(5,), sent=1)),
    (OutboxKind.ALERT, AlertPayload(papers=(7, 9))),
    (OutboxKind.ALERT, AlertPayload(papers=())),
    (OutboxKind.ALERT, AlertPayload(papers=(7, 9), sent=2)),
    (OutboxKind.DIGEST, DigestPayload(batches=(3, 4), papers=(), parts_sent=0)),
    (OutboxKind.DIGEST, DigestPayload(batches=(), papers=(12,), parts_sent=1)),
    (OutboxKind.DIGEST, DigestPayload(papers=(7, 9, 12), parts_sent=0)),
    (OutboxKind.DIGEST, DigestPayload(papers=(7, 9, 12), parts_sent=3)),
    (OutboxKind.SPIKE, NoticePayload("📈 Web Agents is heating up")),
    (OutboxKind.SPIKE, NoticePayload("📈 Web Agents is heating up", parts_sent=1)),
    (OutboxKind.NOTE, NoticePayload("Nothing new since yesterday's digest")),
    (OutboxKind.NOTE, NoticePayload("Nothing new since yesterday's digest", parts_sent=2)),
]


def test_every_kind_has_a_payload_under_test() -> None:
    assert {kind for kind, _ in TYPED} == set(OutboxKind)


@pytest.mark.parametrize(("kind", "payload"), TYPED)
def test_each_payload_round_trips_through_its_json_column(
    kind: OutboxKind, payload: OutboxPayload
) -> None:
    stored = json.loads(json.dumps(payload_to_json(payload)))  # as the column gives it back
    assert payload_from_json(kind, stored) == payload
    assert payload_from_json(kind.value, stored) == payload  # the column holds a plain str


# The JSON the code wrote before payloads were typed, key order included (SQLite keeps
# the text, and so does PostgreSQL's `json`), and the payload each one reads as.
WRITTEN = [
    # enqueue_papers: one row per chat and batch, an alert or an item
    (OutboxKind.ALERT, '{"batches": [3]}', AlertPayload(batches=(3,))),
    (OutboxKind.ITEM, '{"batches": [3]}', ItemPayload(batches=(3,))),
    # revision 0005: rows queued one per paper got their paper as a list
    (OutboxKind.ALERT, '{"papers": [12]}', AlertPayload(papers=(12,))),
    (OutboxKind.ITEM, '{"papers": [12]}', ItemPayload(papers=(12,))),
    # the worker's first claim resolves the batches, then counts the alerts sent
    (OutboxKind.ALERT, '{"papers": [7, 9]}', AlertPayload(papers=(7, 9))),
    (OutboxKind.ALERT, '{"papers": []}', AlertPayload(papers=())),
    (OutboxKind.ALERT, '{"papers": [7, 9], "sent": 1}', AlertPayload(papers=(7, 9), sent=1)),
    # fold_digest, then the first claim, then each part sent
    (
        OutboxKind.DIGEST,
        '{"batches": [3, 4], "papers": [12], "parts_sent": 0}',
        DigestPayload(batches=(3, 4), papers=(12,)),
    ),
    (
        OutboxKind.DIGEST,
        '{"batches": [], "papers": [12], "parts_sent": 1}',
        DigestPayload(batches=(), papers=(12,), parts_sent=1),
    ),
    (
        OutboxKind.DIGEST,
        '{"parts_sent": 0, "papers": [7, 9, 12]}',
        DigestPayload(papers=(7, 9, 12)),
    ),
    (
        OutboxKind.DIGEST,
        '{"parts_sent": 2, "papers": [7, 9, 12]}',
        DigestPayload(papers=(7, 9, 12), parts_sent=2),
    ),
    # enqueue_notice, then each part sent
    (OutboxKind.SPIKE, '{"text": "heating up"}', NoticePayload("heating up")),
    (OutboxKind.NOTE, '{"text": "Nothing new"}', NoticePayload("Nothing new")),
    (OutboxKind.NOTE, '{"text": "Nothing new", "parts_sent": 1}', NoticePayload("Nothing new", 1)),
]


@pytest.mark.parametrize(("kind", "text", "payload"), WRITTEN)
def test_rows_as_written_before_read_and_write_back_byte_for_byte(
    kind: OutboxKind, text: str, payload: OutboxPayload
) -> None:
    assert payload_from_json(kind, json.loads(text)) == payload
    assert json.dumps(payload_to_json(payload)) == text


def test_older_shapes_read_too() -> None:
    """Digests folded before batches (papers first) and ids that came back as text."""
    old_digest = json.loads('{"papers": [7, 9], "parts_sent": 1}')
    assert payload_from_json(OutboxKind.DIGEST, old_digest) == DigestPayload(
        papers=(7, 9), parts_sent=1
    )
    assert payload_from_json("alert", {"papers": ["7"], "sent": "1"}) == AlertPayload(
        papers=(7,), sent=1
    )
    assert payload_from_json(OutboxKind.ALERT, {}) == AlertPayload()
    assert payload_from_json(OutboxKind.NOTE, None) == NoticePayload("")
    assert item_from_json({"batches": [3], "papers": [5]}) == ItemPayload((3,), (5,))


def test_a_claimed_row_comes_out_typed() -> None:
    item = outbox_item(1, 2, 3, "alert", {"batches": [3]}, 1, None)
    assert item.kind is OutboxKind.ALERT and item.payload == AlertPayload(batches=(3,))


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="poke"):
        payload_from_json("poke", {})
