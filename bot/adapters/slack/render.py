"""Replies as Slack Block Kit messages, within Slack's limits, split between papers.

Limits kept: 50 blocks per message (100 in a Home tab), 3,000 characters per section
text, 150 per header, 75 per button label, and about 12,000 characters of text per
message (Slack refuses somewhere near 13,000). Every piece of paper and user text is
mrkdwn-escaped (`&`, `<`, `>`), so nothing can become a link, a mention or markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.adapters.slack.wording import in_slack_words
from bot.domain import Button, PaperItem, Reply
from bot.topics.card import Affiliations, Byline, Field, Links, Summary, Tags, Title, card, shorten
from bot.topics.latex import display

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_BUTTON = 75
MAX_MESSAGE_CHARS = 12_000

Block = dict[str, Any]


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _link(url: str, label: str) -> str:
    return f"<{escape(url)}|{escape(label).replace('|', '¦')}>"


def _section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": shorten(mrkdwn, MAX_SECTION)}}


def _escaped_within(text: str, limit: int) -> str:
    """`text` escaped, shortened (never inside an entity) to at most `limit` characters."""
    escaped = escape(text)
    if len(escaped) <= limit:
        return escaped
    kept, size = [], 1  # room for the "…"
    for ch in text:
        piece = escape(ch)
        if size + len(piece) > limit:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept).rstrip() + "…"


def paragraphs(lines: tuple[str, ...]) -> list[Block]:
    """The reply's lines as sections of at most MAX_SECTION characters, split between
    lines, so that a long reply (a /list of 100 queries) is split, never cut off."""
    return _pack([_escaped_within(line, MAX_SECTION) for line in lines])


def _pack(lines: list[str]) -> list[Block]:
    """Lines of mrkdwn as few sections as fit MAX_SECTION, split between lines."""
    sections: list[Block] = []
    current: list[str] = []
    size = 0
    for text in lines:
        if current and size + 1 + len(text) > MAX_SECTION:
            sections.append(_section("\n".join(current)))
            current, size = [], 0
        size += len(text) + (1 if current else 0)
        current.append(text)
    if current:
        sections.append(_section("\n".join(current)))
    return [s for s in sections if s["text"]["text"].strip()]  # Slack refuses empty text


def _line(field: Field) -> str | None:
    match field:
        case Title(text, url):
            return f"*{_link(url, text)}*"
        case Byline(paper_id, text):  # the id as code: selected and copied whole, for /why
            return f"`{escape(paper_id)}`" + (f" · {escape(text)}" if text else "")
        case Affiliations(text):
            return f"_{escape(text)}_"
        case Tags(tags):
            names = ", ".join(f"*{escape(t.name)}*" if t.followed else escape(t.name) for t in tags)
            return f":label: {names}{field.suffix}"
        case Summary(text):
            return f"TL;DR: {escape(text)}"
        case Links(abs_url, pdf_url) if pdf_url:  # the title already links the abstract
            return f"{_link(abs_url, 'abs')} · {_link(pdf_url, 'PDF')}"
    return None


def paper_blocks(item: PaperItem) -> list[Block]:
    """A paper's card as one section, or as more than one when escaping made it longer than a
    section (`&` becomes `&amp;`): split between fields, never inside an entity. Within the
    card's limits every field fits a section on its own, however it escapes."""
    return _pack([line for field in card(item).fields if (line := _line(field))])


def button_block(row: tuple[Button, ...], values: list[str | None], row_index: int) -> Block | None:
    elements = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": shorten(button.text, MAX_BUTTON)},
            "action_id": f"pw_{button.action.value}_{row_index}_{i}",
            "value": value,
        }
        for i, (button, value) in enumerate(zip(row, values, strict=True))
        if value is not None
    ]
    return {"type": "actions", "elements": elements[:25]} if elements else None


def _size(block: Block) -> int:
    text = block.get("text")
    if isinstance(text, dict):
        return len(text.get("text", ""))
    return sum(len(e["text"]["text"]) for e in block.get("elements", []))


def blocks(reply: Reply) -> list[Block]:
    parts: list[Block] = []
    parts += paragraphs(reply.lines)
    parts += [b for item in reply.papers for b in paper_blocks(item)]
    for section in reply.sections:
        header = shorten(section.heading, MAX_HEADER)
        parts.append({"type": "header", "text": {"type": "plain_text", "text": header}})
        if section.note:
            parts.append(_section(escape(section.note)))
        parts += paragraphs(section.lines)
        parts += [b for item in section.papers for b in paper_blocks(item)]
        if section.footer:
            parts.append(_section(escape(section.footer)))
    if reply.footer:
        parts.append(_section(escape(reply.footer)))
    return parts


def fallback_text(reply: Reply) -> str:
    """The plain notification text (Slack shows it where blocks cannot be shown)."""
    # What the message opens with: its lines, else its first paper's title, else a heading.
    first = reply.lines[0] if reply.lines else ""
    if not first and reply.papers:
        first = display(reply.papers[0].paper.title) or reply.papers[0].paper.shown_id
    if not first and reply.sections:
        first = reply.sections[0].heading
    return escape(shorten(first or "paperwatch", 300))


def render(
    reply: Reply, sign: Callable[[Button], str | None] = lambda _: None
) -> list[dict[str, Any]]:
    """Messages `{"text", "blocks"}` within Slack's limits; the buttons go on the last one.

    `sign(button)` gives a button's payload (None drops the button). Commands named in the
    reply's text are written as Slack users type them (`bot.adapters.slack.wording`).
    """
    reply = in_slack_words(reply)
    actions = [
        block
        for r, row in enumerate(reply.buttons)
        if (block := button_block(row, [sign(button) for button in row], r))
    ]
    text = fallback_text(reply)
    messages: list[list[Block]] = [[]]
    size = len(text)
    for block in blocks(reply):
        if messages[-1] and (
            len(messages[-1]) + 1 > MAX_BLOCKS - len(actions)
            or size + _size(block) > MAX_MESSAGE_CHARS
        ):
            messages.append([])
            size = len(text)
        messages[-1].append(block)
        size += _size(block)
    messages[-1].extend(actions)
    return [{"text": text, "blocks": chunk} for chunk in messages]
