"""What the fake Telegram server checks in outgoing messages: HTML, lengths and keyboards.

`parse_telegram_html` follows Telegram's own parser (tdlib's `parse_html`): the same tag
whitelist, the same attribute syntax and the same error wording, with byte offsets in UTF-8.
With `strict=True` (the default) it is stricter than Telegram in two documented ways, because
both are bugs in the bot even when Telegram forgives them:

* a bare `&` (or `&copy;`, `&lt` without `;`) is rejected; Telegram keeps it as a literal `&`;
* unknown attributes (`<a href="x" onclick="y">`, `<b class="x">`) are rejected; Telegram
  silently ignores them.

Those two errors use wording of our own ("Unescaped ..." / "Unsupported attribute ...").
Lengths are counted like Telegram counts them: UTF-16 code units of the visible text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MESSAGE_LIMIT = 4096
CAPTION_LIMIT = 1024
CALLBACK_DATA_LIMIT = 64
PARSE_PREFIX = "Bad Request: can't parse entities: "
_SPACE = " \t\r\n\v"
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_SIMPLE_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "code": "code",
    "pre": "pre",
}
TAGS = frozenset([*_SIMPLE_TYPES, "a", "blockquote", "tg-emoji"])
_ALLOWED_ATTRS = {"a": {"href"}, "code": {"class"}, "span": {"class"}, "tg-emoji": {"emoji-id"}}
_BUTTON_ACTIONS = (
    "callback_data",
    "url",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)


class HtmlError(ValueError):
    """Telegram's reason for refusing an HTML text (without the "Bad Request" prefix)."""


@dataclass
class ParsedHtml:
    """The visible text after parsing and its entities (offsets in UTF-16 code units)."""

    text: str
    entities: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Open:
    name: str
    at: _LazyOffset  # byte offset of "<"
    start: int  # UTF-16 offset in the visible text
    attrs: dict[str, str]


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: characters outside the BMP count twice."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8", "surrogatepass"))


def _decode_entity(text: str, i: int) -> tuple[str | None, int, bool]:
    """Decode the character reference at text[i] == "&": (char or None, end, had semicolon)."""
    j = i + 1
    if text.startswith("#", j):
        j += 1
        hexadecimal = text.startswith("x", j)
        j += hexadecimal
        digits = "0123456789abcdefABCDEF" if hexadecimal else "0123456789"
        start = j
        while j < len(text) and text[j] in digits:
            j += 1
        value = int(text[start:j], 16 if hexadecimal else 10) if j > start else 0
        valid = 0 < value < 0x10FFFF and not 0xD800 <= value <= 0xDFFF and j - i < 10
        char = chr(value) if valid else None
    else:
        while j < len(text) and text[j].isascii() and text[j].isalpha():
            j += 1
        char = _NAMED.get(text[i + 1 : j])
    if char is None:
        return None, i + 1, False
    semicolon = text.startswith(";", j)
    return char, j + semicolon, semicolon


def _unescaped(text: str, i: int) -> HtmlError:
    return HtmlError(f'Unescaped "&" at byte offset {_byte_offset(text, i)}: write "&amp;"')


class _LazyOffset:
    """The UTF-8 byte offset of text[index], computed only when an error message needs it."""

    def __init__(self, text: str, index: int) -> None:
        self.text, self.index = text, index

    def __str__(self) -> str:
        return str(_byte_offset(self.text, self.index))


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _read_attributes(html: str, i: int, name: str, begin: int, strict: bool) -> tuple[dict, int]:
    """Parse `attr=value ...` up to ">" (tdlib syntax); returns the attributes and ">"'s index."""
    at = _LazyOffset(html, begin)
    attrs: dict[str, str] = {}
    while True:
        i = _skip_spaces(html, i)
        if i >= len(html):
            raise HtmlError(f"Unclosed start tag at byte offset {at}")
        if html[i] == ">":
            return attrs, i
        attr_begin = i
        while i < len(html) and html[i] not in _SPACE and html[i] not in "=>":
            i += 1
        attr = html[attr_begin:i].lower()
        i = _skip_spaces(html, i)
        if not html.startswith("=", i):
            if name == "blockquote" and attr == "expandable":
                attrs[attr] = ""
                continue
            raise HtmlError(
                f'Expected equal sign in declaration of an attribute of the tag "{name}" '
                f"at byte offset {at}"
            )
        i = _skip_spaces(html, i + 1)
        if i >= len(html):
            raise HtmlError(f"Unclosed start tag at byte offset {at}")
        if html[i] in "'\"":
            quote, value = html[i], []
            i += 1
            while i < len(html) and html[i] != quote:
                if html[i] == "&":
                    char, end, semicolon = _decode_entity(html, i)
                    if char is not None and (semicolon or not strict):
                        value.append(char)
                        i = end
                        continue
                    if strict:
                        raise _unescaped(html, i)
                value.append(html[i])
                i += 1
            if i >= len(html):
                raise HtmlError(f"Unclosed start tag at byte offset {at}")
            i += 1
            attrs[attr] = "".join(value)
        else:
            token_begin = i
            while i < len(html) and ((html[i].isascii() and html[i].isalnum()) or html[i] in ".-"):
                i += 1
            if i < len(html) and html[i] not in _SPACE and html[i] != ">":
                raise HtmlError(
                    f"Unexpected end of name token at byte offset {_byte_offset(html, token_begin)}"
                )
            attrs[attr] = html[token_begin:i].lower()
        allowed = _ALLOWED_ATTRS.get(name, set())
        bad_class = name == "code" and attr == "class" and not attrs[attr].startswith("language-")
        if strict and (attr not in allowed or bad_class):
            raise HtmlError(
                f'Unsupported attribute "{attr}" in the tag "{name}" at byte offset {at}'
            )


def _check_start_tag(tag: _Open) -> None:
    if tag.name == "span" and tag.attrs.get("class") != "tg-spoiler":
        raise HtmlError(f'Tag "span" must have class "tg-spoiler" at byte offset {tag.at}')
    if tag.name == "tg-emoji" and not tag.attrs.get("emoji-id", "").isdigit():
        raise HtmlError(f'Tag "tg-emoji" must have attribute "emoji-id" at byte offset {tag.at}')


def _entity(tag: _Open, length: int, stack: list[_Open]) -> dict[str, Any] | None:
    """The MessageEntity a closed tag produces (None for code inside pre: pre takes its class)."""
    if length <= 0:
        return None
    entity: dict[str, Any] = {"offset": tag.start, "length": length}
    if tag.name == "a":
        url = tag.attrs.get("href", "")
        return {**entity, "type": "text_link", "url": url} if url else None
    if tag.name == "blockquote":
        kind = "expandable_blockquote" if "expandable" in tag.attrs else "blockquote"
        return {**entity, "type": kind}
    if tag.name == "tg-emoji":
        return {**entity, "type": "custom_emoji", "custom_emoji_id": tag.attrs["emoji-id"]}
    language = tag.attrs.get("class", "").removeprefix("language-")
    if tag.name == "code" and stack and stack[-1].name == "pre":
        if language:
            stack[-1].attrs["language"] = language
        return None
    if tag.name == "pre" and tag.attrs.get("language"):
        entity["language"] = tag.attrs["language"]
    return {**entity, "type": _SIMPLE_TYPES[tag.name]}


def parse_telegram_html(html: str, *, strict: bool = True) -> ParsedHtml:
    """Parse Telegram-flavoured HTML into visible text and entities, or raise HtmlError."""
    out: list[str] = []
    utf16 = 0
    stack: list[_Open] = []
    entities: list[dict[str, Any]] = []
    i = 0
    while i < len(html):
        ch = html[i]
        if ch == "&":
            char, end, semicolon = _decode_entity(html, i)
            if char is None or (strict and not semicolon):
                if strict:
                    raise _unescaped(html, i)
                char, end = "&", i + 1
            out.append(char)
            utf16 += utf16_len(char)
            i = end
            continue
        if ch != "<":
            out.append(ch)
            utf16 += 1 + (ord(ch) > 0xFFFF)
            i += 1
            continue
        begin, at = i, _LazyOffset(html, i)
        if html.startswith("/", i + 1):
            if not stack:
                raise HtmlError(f"Unexpected end tag at byte offset {at}")
            j = i + 2
            while j < len(html) and html[j] not in _SPACE and html[j] != ">":
                j += 1
            end_name = html[i + 2 : j].lower()
            j = _skip_spaces(html, j)
            if j >= len(html) or html[j] != ">":
                raise HtmlError(f"Unclosed end tag at byte offset {at}")
            tag = stack.pop()
            if end_name and end_name != tag.name:
                raise HtmlError(
                    f'Unmatched end tag at byte offset {at}, expected "</{tag.name}>", '
                    f'found "</{end_name}>"'
                )
            entity = _entity(tag, utf16 - tag.start, stack)
            if entity is not None:
                entities.append(entity)
            i = j + 1
            continue
        j = i + 1
        while j < len(html) and html[j] not in _SPACE and html[j] != ">":
            j += 1
        if j >= len(html):
            raise HtmlError(f"Unclosed start tag at byte offset {at}")
        name = html[i + 1 : j].lower()
        if name not in TAGS:
            raise HtmlError(f'Unsupported start tag "{name}" at byte offset {at}')
        attrs, j = _read_attributes(html, j, name, begin, strict)
        tag = _Open(name, at, utf16, attrs)
        _check_start_tag(tag)
        stack.append(tag)
        i = j + 1
    if stack:
        raise HtmlError(f'Can\'t find end tag corresponding to start tag "{stack[-1].name}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return ParsedHtml("".join(out), entities)


def check_message_text(
    text: object, parse_mode: object = None, *, caption: bool = False, strict: bool = True
) -> tuple[ParsedHtml, str | None]:
    """Check a message text (or a photo caption) the way sendMessage/sendPhoto do.

    Returns the parsed text and None, or an empty result and Telegram's error description.
    MarkdownV2/Markdown are not parsed: only the raw text's length is checked for them.
    """
    raw = "" if text is None else str(text)
    mode = str(parse_mode).lower() if parse_mode else ""
    if mode not in ("", "html", "markdown", "markdownv2"):
        return ParsedHtml(""), "Bad Request: unsupported parse_mode"
    try:
        parsed = parse_telegram_html(raw, strict=strict) if mode == "html" else ParsedHtml(raw)
    except HtmlError as exc:
        return ParsedHtml(""), PARSE_PREFIX + str(exc)
    if caption:
        if utf16_len(parsed.text) > CAPTION_LIMIT:
            return ParsedHtml(""), "Bad Request: message caption is too long"
    elif not parsed.text.strip():
        return ParsedHtml(""), "Bad Request: message text is empty"
    elif utf16_len(parsed.text) > MESSAGE_LIMIT:
        return ParsedHtml(""), "Bad Request: message is too long"
    return parsed, None


def check_telegram_html(text: str, *, strict: bool = True) -> str | None:
    """None when Telegram accepts `text` as an HTML message, else its error description."""
    return check_message_text(text, "HTML", strict=strict)[1]


def check_reply_markup(markup: object) -> str | None:
    """None when the reply_markup (a dict or its JSON) is acceptable, else the error."""
    if markup is None:
        return None
    bad_json = "Bad Request: can't parse reply keyboard markup JSON object"
    if isinstance(markup, str):
        try:
            markup = json.loads(markup)
        except ValueError:
            return bad_json
    if not isinstance(markup, dict):
        return bad_json
    if "force_reply" in markup:
        return _force_reply_problem(markup)
    keyboard = markup.get("inline_keyboard")
    if keyboard is None:
        return None  # ReplyKeyboardMarkup, ReplyKeyboardRemove: not checked
    if not isinstance(keyboard, list) or not all(isinstance(row, list) for row in keyboard):
        return bad_json
    for button in (button for row in keyboard for button in row):
        prefix = "Bad Request: can't parse inline keyboard button: "
        if not isinstance(button, dict):
            return prefix + "InlineKeyboardButton must be an Object"
        if "text" not in button:
            return prefix + 'Can\'t find field "text"'
        if not isinstance(button["text"], str):
            return prefix + 'Field "text" must be of type String'
        if not button["text"].strip():
            return "Bad Request: BUTTON_TEXT_INVALID"
        if not any(key in button for key in _BUTTON_ACTIONS):
            return prefix + "Text buttons are unallowed in the inline keyboard"
        data = button.get("callback_data")
        if data is not None and not 1 <= len(str(data).encode("utf-8")) <= CALLBACK_DATA_LIMIT:
            return "Bad Request: BUTTON_DATA_INVALID"
    return None


def _force_reply_problem(markup: dict) -> str | None:
    """ForceReply: `force_reply` must be true; a placeholder is 1-64 characters."""
    if markup.get("force_reply") is not True:
        return "Bad Request: can't parse reply keyboard markup JSON object"
    placeholder = markup.get("input_field_placeholder")
    if placeholder is not None and not (
        isinstance(placeholder, str) and 1 <= len(placeholder) <= 64
    ):
        return "Bad Request: INPUT_FIELD_PLACEHOLDER_INVALID"
    return None


def check_bot_commands(commands: object) -> str | None:
    """None when a setMyCommands list is acceptable, else the error (wording approximated)."""
    if not isinstance(commands, list) or len(commands) > 100:
        return "Bad Request: can't parse commands JSON object"
    for command in commands:
        if not isinstance(command, dict):
            return "Bad Request: can't parse commands JSON object"
        name = str(command.get("command", ""))
        if not (
            1 <= len(name) <= 32 and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
        ):
            return "Bad Request: BOT_COMMAND_INVALID"
        if name != name.lower():
            return "Bad Request: BOT_COMMAND_INVALID"
        if not 1 <= len(str(command.get("description", "")).strip()) <= 256:
            return "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID"
    return None
