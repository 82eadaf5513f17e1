"""Replies as Telegram HTML messages: escaped, within 4,096 characters, split between papers,
with signed inline buttons on the last one.

Telegram counts a message's length after entity parsing (tags removed, entities
decoded) in UTF-16 code units; so do we. A reply longer than one message is split
at paragraph or paper boundaries, never inside a tag.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from html import escape

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot import buttons
from bot.domain import Button, PaperItem, Reply
from bot.topics.card import Affiliations, Byline, Field, Links, Summary, Tags, Title, card, shorten

MAX_CHARS = 4096
MAX_LINE = 3500
POPUP_CHARS = 200  # answerCallbackQuery's text limit


@dataclass(frozen=True, slots=True)
class Block:
    """A piece of a message: its HTML, and how long Telegram will count it."""

    html: str
    visible: int


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _text(text: str, limit: int = MAX_LINE) -> Block:
    plain = shorten(text, limit)
    return Block(escape(plain), utf16_len(plain))


def _link(url: str, label: str) -> str:
    return f'<a href="{escape(url)}">{escape(label)}</a>'


def _line(field: Field) -> tuple[str, str] | None:
    """A card field as (HTML, the text Telegram shows of it); None for nothing to show."""
    match field:
        case Title(text, url):
            return f"<b>{_link(url, text)}</b>", text
        case Byline(paper_id, text):  # the id in code: tapping it copies it, for /why
            rest = f" · {escape(text)}" if text else ""
            return f"<code>{escape(paper_id)}</code>{rest}", field.plain
        case Affiliations(text):
            return f"<i>{escape(text)}</i>", text
        case Tags(tags):
            html = ", ".join(
                f"<b>{escape(t.name)}</b>" if t.followed else escape(t.name) for t in tags
            )
            shown = ", ".join(t.name for t in tags)
            return f"🏷 {html}{field.suffix}", f"🏷 {shown}{field.suffix}"
        case Summary(text):
            return f"TL;DR: {escape(text)}", f"TL;DR: {text}"
        case Links(abs_url, pdf_url) if pdf_url:  # the title already links the abstract
            return f"{_link(abs_url, 'abs')} · {_link(pdf_url, 'PDF')}", "abs · PDF"
    return None


@lru_cache(maxsize=1024)  # one paper, shown the same way to every chat that gets it
def _paper(item: PaperItem) -> Block:
    lines = [line for field in card(item).fields if (line := _line(field))]
    html, visible = zip(*lines, strict=True)
    return Block("\n".join(html), utf16_len("\n".join(visible)))


def blocks(reply: Reply) -> list[Block]:
    parts = [_text(line) for line in reply.lines]
    parts += [_paper(item) for item in reply.papers]
    for section in reply.sections:
        heading = shorten(section.heading, 200)
        parts.append(Block(f"<b>{escape(heading)}</b>", utf16_len(heading)))
        if section.note:
            parts.append(_text(section.note))
        parts += [_text(line) for line in section.lines]
        parts += [_paper(item) for item in section.papers]
        if section.footer:
            parts.append(_text(section.footer))
    if reply.footer:
        parts.append(_text(reply.footer))
    return [p for p in parts if p.visible]


def render(reply: Reply, limit: int = MAX_CHARS) -> list[str]:
    """One or more HTML messages, each within `limit` visible characters."""
    messages: list[str] = []
    current: list[str] = []
    size = 0
    for block in blocks(reply):
        joiner = 2 if current else 0  # the blank line between blocks
        if current and size + joiner + block.visible > limit:
            messages.append("\n\n".join(current))
            current, size, joiner = [], 0, 0
        current.append(block.html)
        size += joiner + block.visible
    if current:
        messages.append("\n\n".join(current))
    return messages or [escape("…")]


@dataclass(frozen=True, slots=True)
class TelegramMessage:
    html: str
    markup: InlineKeyboardMarkup | None


@lru_cache(maxsize=4096)
def _cell(button: Button, chat_id: str, key: bytes, on: date) -> InlineKeyboardButton | None:
    """A chat's signed button, issued `on` a day. Cached: a chat's alerts repeat most of
    their buttons (its topic's "Latest" and "Unfollow", the same "Mute"s), and PTB objects
    are costly to build; they are frozen, so one can serve every message that shows it."""
    data = buttons.encode(button, chat_id, key, on=on)
    return None if data is None else InlineKeyboardButton(button.text[:64], callback_data=data)


def keyboard(reply: Reply, chat_id: str, key: bytes) -> InlineKeyboardMarkup | None:
    rows, on = [], buttons.today()
    for row in reply.buttons:
        cells = [cell for button in row if (cell := _cell(button, chat_id, key, on)) is not None]
        if cells:
            rows.append(cells)
    return InlineKeyboardMarkup(rows) if rows else None


def to_messages(reply: Reply, chat_id: str, key: bytes) -> list[TelegramMessage]:
    """HTML messages within Telegram's limits; the buttons go on the last one."""
    texts = render(reply)
    markup = keyboard(reply, chat_id, key)
    return [
        TelegramMessage(text, markup if i == len(texts) - 1 else None)
        for i, text in enumerate(texts)
    ]


def _card_title(item: PaperItem) -> str:
    title = next(f for f in card(item).fields if isinstance(f, Title))
    return title.text


def popup(reply: Reply) -> str:
    """A reply as the plain text of a callback answer's alert (at most 200 characters)."""
    parts = [*reply.lines, *(f"• {_card_title(item)}" for item in reply.papers)]
    for section in reply.sections:
        parts += [section.heading, *section.lines]
    return shorten("\n".join(parts), POPUP_CHARS)
