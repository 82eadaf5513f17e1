"""Signed button payloads: within 64 bytes, bound to one chat, and not valid for ever."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from bot import buttons
from bot.domain import Action, Button
from bot.services.ingest import sample_papers
from bot.topics.catalog import load_catalog

KEY = buttons.button_key("123456:test")
DAY = date(2026, 12, 1)
UNFOLLOW = Button("Unfollow Web Agents", Action.UNFOLLOW, "web-agents")


def test_a_payload_is_read_back_in_its_own_chat_only() -> None:
    data = buttons.encode(UNFOLLOW, "111", KEY, on=DAY)
    assert data is not None and len(data.encode()) <= buttons.MAX_BYTES
    decoded = buttons.decode(data, "111", KEY, on=DAY)
    assert decoded is not None and (decoded.action, decoded.arg) == (Action.UNFOLLOW, "web-agents")
    assert buttons.decode(data, "222", KEY, on=DAY) is None
    assert buttons.decode(data, "111", buttons.button_key("other"), on=DAY) is None


@pytest.mark.parametrize(
    ("age", "valid"),
    [(0, True), (29, True), (30, True), (31, False), (365, False), (-1, True), (-2, False)],
)
def test_buttons_expire_after_thirty_days(age: int, valid: bool) -> None:
    data = buttons.encode(UNFOLLOW, "111", KEY, on=DAY)
    assert data is not None
    pressed = buttons.decode(data, "111", KEY, on=DAY + timedelta(days=age))
    assert (pressed is not None) is valid


def test_the_issue_day_is_signed() -> None:
    data = buttons.encode(UNFOLLOW, "111", KEY, on=DAY - timedelta(days=40))
    assert data is not None
    younger = buttons.encode(UNFOLLOW, "111", KEY, on=DAY)
    assert younger is not None
    forged = data[0] + younger[1:4] + data[4:]  # an old button with a new date
    assert buttons.decode(forged, "111", KEY, on=DAY) is None


@pytest.mark.parametrize("data", ["", "u", "u|web-agents|forgedsig00", "x" * 80, "uzz!" + "a" * 20])
def test_garbage_is_refused(data: str) -> None:
    assert buttons.decode(data, "111", KEY, on=DAY) is None


def test_every_catalog_topic_fits_in_a_button() -> None:
    for topic in load_catalog().topics:
        for action in Action:
            data = buttons.encode(Button("x", action, topic.slug), "-1001234567890", KEY, on=DAY)
            assert data is not None, topic.slug
            assert len(data.encode()) <= buttons.MAX_BYTES
    query_tag = "q:" + "0" * 16
    assert buttons.encode(Button("x", Action.LATEST, query_tag), "-100123", KEY, on=DAY)


def test_every_sample_papers_why_button_fits_and_reads_back_signed() -> None:
    """A `sample:` key with its signature passed 64 bytes, so "Why this paper?" was dropped
    for sample papers; the key now travels packed, and is still signed for its chat."""
    for paper in sample_papers():
        why = Button("Why this paper?", Action.WHY, paper.arxiv_id)
        data = buttons.encode(why, "-1001234567890", KEY, on=DAY)
        assert data is not None and len(data.encode()) <= buttons.MAX_BYTES, paper.arxiv_id
        pressed = buttons.decode(data, "-1001234567890", KEY, on=DAY)
        assert pressed is not None and (pressed.action, pressed.arg) == (Action.WHY, paper.arxiv_id)
        assert buttons.decode(data, "111", KEY, on=DAY) is None
        tampered = data[:-1] + ("A" if data[-1] != "A" else "B")
        assert buttons.decode(tampered, "-1001234567890", KEY, on=DAY) is None
    garbage = buttons.encode(Button("x", Action.WHY, "sample:a"), "1", KEY, on=DAY)
    assert garbage is not None
    assert buttons.decode(garbage[:-1] + "!", "1", KEY, on=DAY) is None
