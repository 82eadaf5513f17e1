"""Slack replies are split into several messages, never silently cut."""

from __future__ import annotations

from bot.adapters.slack.render import MAX_BLOCKS, MAX_MESSAGE_CHARS, MAX_SECTION, render
from bot.domain import Reply


def texts(messages: list[dict]) -> list[str]:
    return [b["text"]["text"] for m in messages for b in m["blocks"] if b["type"] == "section"]


def test_a_list_of_a_hundred_queries_shows_every_one() -> None:
    lines = ["You follow 100 queries:"] + [
        f'• "query number {n}" AND (agent OR agents) AND cat:cs.LG NOT survey' for n in range(100)
    ]
    messages = render(Reply.text(*lines))
    shown = "\n".join(texts(messages))
    for n in range(100):
        assert f'"query number {n}"' in shown
    for message in messages:
        assert len(message["blocks"]) <= MAX_BLOCKS
        assert sum(len(b["text"]["text"]) for b in message["blocks"]) <= MAX_MESSAGE_CHARS
    assert all(len(t) <= MAX_SECTION for t in texts(messages))


def test_a_huge_reply_becomes_several_messages() -> None:
    lines = [f"line {n} " + "x" * 200 for n in range(400)]  # about 82,000 characters
    messages = render(Reply.text(*lines))
    assert len(messages) > 1
    shown = "\n".join(texts(messages))
    assert all(f"line {n} " in shown for n in range(400))


def test_one_overlong_line_is_shortened_outside_an_entity() -> None:
    (message,) = render(Reply.text("&" * 5000))
    (text,) = texts([message])
    assert len(text) <= MAX_SECTION and text.endswith("&amp;…")
