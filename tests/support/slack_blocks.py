"""Pure Block Kit and mrkdwn checks for the fake Slack Web API (no I/O, no state).

`check_message` and `check_view` return None when Slack would accept the payload, otherwise
`(error, errors)` shaped like Slack's answer: `("invalid_blocks", ["must be less than 3001
characters [json-pointer:/blocks/0/text/text]", ...])` or `("msg_too_long", [...])`.

Limits follow Slack's Block Kit reference (50 blocks per message, 100 per view, section text
3,000, header 150, button text 75 / value 2,000, action_id and block_id 255, 25 elements per
actions block, 10 fields / context elements, ...). Two rules are the fake's own:

* msg_too_long: `message_text_length` = len(top-level `text`) + the len of every text
  object's `text` anywhere in the blocks (sections, fields, headers, context, buttons,
  options, ...) + every `markdown` block's `text`, in code points; over MAX_MESSAGE_TEXT
  (13,000) the message is refused. Attachments and rich_text are not counted.
* strict mrkdwn (stricter than Slack, which would accept and render it wrongly): in mrkdwn a
  `<` must open `<http(s)://...>`, `<mailto:...>`, `<tel:...>`, `<slack://...>`, `<@U...>`,
  `<@W...>`, `<#C...>`, `<#G...>`, `<!here>`, `<!channel>`, `<!everyone>`, `<!subteam^S...>`
  or `<!date^...>` (each with an optional `|label`), and every `&` must start `&amp;`,
  `&lt;` or `&gt;` (also inside link URLs). `>` may stay bare (it quotes).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_MESSAGE_TEXT = 13_000

BLOCK_TYPES = frozenset(
    {"actions", "context", "divider", "file", "header", "image", "input", "markdown"}
    | {"rich_text", "section", "table", "video"}
)
ELEMENT_TYPES = frozenset(
    {"button", "checkboxes", "datepicker", "datetimepicker", "email_text_input", "file_input"}
    | {"image", "number_input", "overflow", "plain_text_input", "radio_buttons"}
    | {"rich_text_input", "timepicker", "url_text_input", "workflow_button"}
    | {f"{kind}_select" for kind in ("static", "external", "users", "conversations", "channels")}
    | {f"multi_{kind}_select" for kind in ("static", "external", "users", "conversations")}
    | {"multi_channels_select"}
)
TEXT_TYPES = ("plain_text", "mrkdwn")

_LABEL = r"(?:\|[^<>]*)?"
_MARKUP = re.compile(
    rf"(?:(?:https?://|mailto:|tel:|slack://)[^\s|<>]+{_LABEL}"
    rf"|@[UW][A-Z0-9]+{_LABEL}|#[CG][A-Z0-9]+{_LABEL}"
    rf"|!(?:here|channel|everyone){_LABEL}|!subteam\^S[A-Z0-9]+{_LABEL}"
    rf"|!date\^\d+\^[^|<>]+{_LABEL})"
)
_ENTITY = re.compile(r"&(?:amp|lt|gt);")


def escape_mrkdwn(text: str) -> str:
    """Escape `&`, `<` and `>` the way Slack asks for literal text in mrkdwn."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn_problem(text: str) -> str | None:
    """Why `text` is not safely escaped mrkdwn (see the module docstring), or None."""
    for match in re.finditer("[&<]", text):
        index = match.start()
        near = repr(text[max(0, index - 15) : index + 15])
        if match[0] == "&" and not _ENTITY.match(text, index):
            return f'unescaped markup: bare "&" at offset {index} near {near}, write "&amp;"'
        end = text.find(">", index)
        if match[0] == "<" and (end == -1 or not _MARKUP.fullmatch(text, index + 1, end)):
            return (
                f'unescaped markup: "<" at offset {index} near {near} starts no link or '
                'mention, write "&lt;"'
            )
    return None


def iter_text_objects(node: object, pointer: str = "") -> Iterator[tuple[str, dict]]:
    """Every text object (a dict typed plain_text/mrkdwn with a str `text`) under `node`."""
    if isinstance(node, dict):
        if node.get("type") in TEXT_TYPES and isinstance(node.get("text"), str):
            yield pointer, node
            return
        for key, value in node.items():
            yield from iter_text_objects(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from iter_text_objects(value, f"{pointer}/{index}")


def message_text_length(text: object, blocks: object) -> int:
    """The size msg_too_long is judged on (the rule is in the module docstring)."""
    total = len(text) if isinstance(text, str) else 0
    total += sum(len(obj["text"]) for _, obj in iter_text_objects(blocks))
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict) and block.get("type") == "markdown":
            total += len(block["text"]) if isinstance(block.get("text"), str) else 0
    return total


class _Checker:
    """Walks blocks and collects Slack-style error strings."""

    def __init__(self, strict_mrkdwn: bool) -> None:
        self.strict_mrkdwn = strict_mrkdwn
        self.errors: list[str] = []

    def fail(self, pointer: str, message: str) -> None:
        self.errors.append(f"{message} [json-pointer:{pointer}]")

    def string(self, value: object, pointer: str, limit: int, *, required: bool = False) -> None:
        if value is None:
            if required:
                self.fail(pointer, "missing required field")
        elif not isinstance(value, str):
            self.fail(pointer, "must be a string")
        elif len(value) > limit:
            self.fail(pointer, f"must be less than {limit + 1} characters")

    def text(
        self, obj: object, pointer: str, limit: int, *, plain: bool = False, required: bool = True
    ) -> None:
        """A text object: typed plain_text or mrkdwn (plain=True: plain_text only), 1..limit."""
        if obj is None:
            if required:
                self.fail(pointer, "missing required field")
            return
        if not isinstance(obj, dict):
            self.fail(pointer, "must be a text object")
            return
        kind = obj.get("type")
        if kind is None:
            self.fail(f"{pointer}/type", 'missing required field: type ("plain_text"/"mrkdwn")')
        elif kind not in (("plain_text",) if plain else TEXT_TYPES):
            allowed = "plain_text" if plain else "plain_text, mrkdwn"
            self.fail(f"{pointer}/type", f"must be one of: {allowed}")
        value = obj.get("text")
        if not isinstance(value, str):
            self.fail(f"{pointer}/text", "missing required field: text")
        elif not value:
            self.fail(f"{pointer}/text", "must be more than 0 characters")
        elif len(value) > limit:
            self.fail(f"{pointer}/text", f"must be less than {limit + 1} characters")
        elif kind == "mrkdwn" and self.strict_mrkdwn and (problem := mrkdwn_problem(value)):
            self.fail(f"{pointer}/text", problem)

    def items(self, value: object, pointer: str, low: int, high: int) -> list:
        """A list of low..high items (anything else is reported and treated as empty)."""
        if not isinstance(value, list):
            self.fail(pointer, "must be an array")
            return []
        if len(value) > high:
            self.fail(pointer, f"no more than {high} items allowed")
        elif len(value) < low:
            self.fail(pointer, f"must provide at least {low} items")
        return value

    def options(self, value: object, pointer: str, high: int, *, plain: bool = True) -> None:
        for index, option in enumerate(self.items(value, pointer, 1, high)):
            where = f"{pointer}/{index}"
            if not isinstance(option, dict):
                self.fail(where, "must be an option object")
                continue
            self.text(option.get("text"), f"{where}/text", 75, plain=plain)
            self.string(option.get("value"), f"{where}/value", 150, required=True)
            self.text(option.get("description"), f"{where}/description", 75, required=False)

    def element(self, element: object, pointer: str, action_ids: set[str]) -> None:
        """An interactive element (or image) of an actions, section or input block."""
        if not isinstance(element, dict):
            self.fail(pointer, "must be an element object")
            return
        kind = element.get("type")
        if kind not in ELEMENT_TYPES:
            self.fail(f"{pointer}/type", f"unsupported element type: {kind!r}")
            return
        if kind == "image":
            self.string(element.get("image_url"), f"{pointer}/image_url", 3000, required=True)
            self.string(element.get("alt_text"), f"{pointer}/alt_text", 2000, required=True)
            return
        action_id = element.get("action_id")
        self.string(action_id, f"{pointer}/action_id", 255)
        if isinstance(action_id, str):
            if action_id in action_ids:
                self.fail(f"{pointer}/action_id", f"duplicate action_id {action_id!r}")
            action_ids.add(action_id)
        self.text(element.get("placeholder"), f"{pointer}/placeholder", 150, required=False)
        if kind == "button":
            self.text(element.get("text"), f"{pointer}/text", 75, plain=True)
            self.string(element.get("value"), f"{pointer}/value", 2000)
            self.string(element.get("url"), f"{pointer}/url", 3000)
            if element.get("style") not in (None, "primary", "danger"):
                self.fail(f"{pointer}/style", "must be one of: primary, danger")
        elif kind == "overflow":
            self.options(element.get("options"), f"{pointer}/options", 5)
        elif kind in ("checkboxes", "radio_buttons"):
            self.options(element.get("options"), f"{pointer}/options", 10, plain=False)
        elif kind in ("static_select", "multi_static_select") and "option_groups" not in element:
            self.options(element.get("options"), f"{pointer}/options", 100)

    def block(self, block: object, pointer: str, block_ids: set[str]) -> None:
        """One layout block."""
        if not isinstance(block, dict):
            self.fail(pointer, "must be a block object")
            return
        kind = block.get("type")
        if kind is None:
            self.fail(f"{pointer}/type", "missing required field: type")
            return
        if kind not in BLOCK_TYPES:
            self.fail(f"{pointer}/type", f"unsupported block type: {kind!r}")
            return
        block_id = block.get("block_id")
        self.string(block_id, f"{pointer}/block_id", 255)
        if isinstance(block_id, str):
            if block_id in block_ids:
                self.fail(f"{pointer}/block_id", f"duplicate block_id {block_id!r}")
            block_ids.add(block_id)
        action_ids: set[str] = set()
        if kind == "section":
            if block.get("text") is None and block.get("fields") is None:
                self.fail(pointer, "must provide either text or fields")
            self.text(block.get("text"), f"{pointer}/text", 3000, required=False)
            if block.get("fields") is not None:
                for index, field in enumerate(
                    self.items(block["fields"], f"{pointer}/fields", 1, 10)
                ):
                    self.text(field, f"{pointer}/fields/{index}", 2000)
            if block.get("accessory") is not None:
                self.element(block["accessory"], f"{pointer}/accessory", action_ids)
        elif kind == "header":
            self.text(block.get("text"), f"{pointer}/text", 150, plain=True)
        elif kind == "actions":
            for index, element in enumerate(
                self.items(block.get("elements"), f"{pointer}/elements", 1, 25)
            ):
                self.element(element, f"{pointer}/elements/{index}", action_ids)
        elif kind == "context":
            for index, item in enumerate(
                self.items(block.get("elements"), f"{pointer}/elements", 1, 10)
            ):
                where = f"{pointer}/elements/{index}"
                if isinstance(item, dict) and item.get("type") == "image":
                    self.element(item, where, action_ids)
                else:
                    self.text(item, where, 3000)
        elif kind == "image":
            if block.get("slack_file") is None:
                self.string(block.get("image_url"), f"{pointer}/image_url", 3000, required=True)
            self.string(block.get("alt_text"), f"{pointer}/alt_text", 2000, required=True)
            self.text(block.get("title"), f"{pointer}/title", 2000, plain=True, required=False)
        elif kind == "input":
            self.text(block.get("label"), f"{pointer}/label", 2000, plain=True)
            self.text(block.get("hint"), f"{pointer}/hint", 2000, plain=True, required=False)
            self.element(block.get("element"), f"{pointer}/element", action_ids)
        elif kind == "markdown":
            self.string(block.get("text"), f"{pointer}/text", 12_000, required=True)
        elif kind == "rich_text":
            self.items(block.get("elements"), f"{pointer}/elements", 1, 10_000)

    def blocks(self, blocks: object, pointer: str, limit: int) -> None:
        block_ids: set[str] = set()
        for index, block in enumerate(self.items(blocks, pointer, 0, limit)):
            self.block(block, f"{pointer}/{index}", block_ids)


def check_blocks(
    blocks: object,
    *,
    limit: int = MAX_MESSAGE_BLOCKS,
    pointer: str = "/blocks",
    strict_mrkdwn: bool = True,
) -> list[str]:
    """Slack-style error strings for a block list (empty when valid)."""
    checker = _Checker(strict_mrkdwn)
    checker.blocks(blocks, pointer, limit)
    return checker.errors


def check_message(
    text: object, blocks: object, *, mrkdwn: bool = True, strict_mrkdwn: bool = True
) -> tuple[str, list[str]] | None:
    """None if chat.postMessage/postEphemeral/update would accept this text and these blocks."""
    errors: list[str] = []
    if blocks is not None:
        errors = check_blocks(blocks, strict_mrkdwn=strict_mrkdwn)
    if isinstance(text, str) and mrkdwn and strict_mrkdwn and (problem := mrkdwn_problem(text)):
        errors.append(f"{problem} [json-pointer:/text]")
    if errors:
        return "invalid_blocks", errors
    size = message_text_length(text, blocks)
    if size > MAX_MESSAGE_TEXT:
        return "msg_too_long", [f"message text is {size} characters, over {MAX_MESSAGE_TEXT}"]
    return None


def check_view(view: object, *, strict_mrkdwn: bool = True) -> tuple[str, list[str]] | None:
    """None if views.publish would accept this Home tab view."""
    if not isinstance(view, dict) or view.get("type") != "home":
        return "invalid_arguments", ['view.type must be "home" [json-pointer:/view/type]']
    errors = check_blocks(
        view.get("blocks"),
        limit=MAX_VIEW_BLOCKS,
        pointer="/view/blocks",
        strict_mrkdwn=strict_mrkdwn,
    )
    return ("invalid_blocks", errors) if errors else None


def check_modal(view: object, *, strict_mrkdwn: bool = True) -> tuple[str, list[str]] | None:
    """None if views.open would accept this modal: a plain-text title of at most 24
    characters, submit and close of at most 24, a submit button when there is an input
    block, callback_id up to 255 and private_metadata up to 3,000 characters, valid blocks."""
    if not isinstance(view, dict) or view.get("type") != "modal":
        return "invalid_arguments", ['view.type must be "modal" [json-pointer:/view/type]']
    checker = _Checker(strict_mrkdwn)
    checker.text(view.get("title"), "/view/title", 24, plain=True)
    checker.text(view.get("close"), "/view/close", 24, plain=True, required=False)
    checker.text(view.get("submit"), "/view/submit", 24, plain=True, required=False)
    checker.string(view.get("callback_id"), "/view/callback_id", 255)
    checker.string(view.get("private_metadata"), "/view/private_metadata", 3000)
    blocks = view.get("blocks")
    checker.blocks(blocks, "/view/blocks", MAX_VIEW_BLOCKS)
    has_input = isinstance(blocks, list) and any(
        isinstance(b, dict) and b.get("type") == "input" for b in blocks
    )
    if has_input and view.get("submit") is None:
        checker.fail("/view/submit", "a view with input blocks must have a submit button")
    return ("invalid_arguments", checker.errors) if checker.errors else None
