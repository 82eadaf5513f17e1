"""Slack replies are split into several messages, never silently cut."""

from __future__ import annotations

from datetime import date

from bot.adapters.slack.render import MAX_BLOCKS, MAX_MESSAGE_CHARS, MAX_SECTION, render
from bot.domain import Paper, PaperItem, Reply, Section


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


def test_commands_named_in_a_reply_are_written_as_slack_commands() -> None:
    """In Slack every command is a word after /paperwatch: "/latest shows the newest papers"
    sent people to a Slack command that does not exist. Only command names change; a URL,
    an unknown command and a paper's own text stay as they are."""
    paper = PaperItem(
        Paper(arxiv_id="2611.00001", title="Why /follow fails", announced=date(2026, 11, 2))
    )
    reply = Reply(
        lines=(
            "Try: /follow RL for LLM Agents",
            "Then /latest shows the newest papers. /help lists every command.",
            "I don't know the command /folow. Did you mean /follow?",
            "See https://arxiv.org/list/cs.AI/new or 1/2 and/or /digest.",
        ),
        papers=(paper,),
        sections=(Section("Web Agents", note="+3 more: /latest Web Agents pages through them"),),
        footer="Page 1 of 2: /list 2 for more.",
    )
    [message] = render(reply)
    shown = "\n".join(texts([message]))
    assert "Try: /paperwatch follow RL for LLM Agents" in shown
    assert "Then /paperwatch latest shows the newest papers. /paperwatch help lists" in shown
    assert "the command /folow. Did you mean /paperwatch follow?" in shown
    assert "https://arxiv.org/list/cs.AI/new or 1/2 and/or /paperwatch digest." in shown
    assert "+3 more: /paperwatch latest Web Agents" in shown
    assert "Page 1 of 2: /paperwatch list 2 for more." in shown
    assert "Why /follow fails" in shown  # a paper's title is the paper's
    assert message["text"].startswith("Try: /paperwatch follow")
