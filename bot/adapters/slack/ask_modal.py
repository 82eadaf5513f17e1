"""The "Ask about <topic>" button on Slack: a form (modal) with one question field.

Pressing the button opens the form (`views.open` with the press's trigger_id); submitting
it (`view_submission`) runs `/paperwatch ask <topic>: <question>` and answers where the
button was, as a command's answer is. The form carries, in its `private_metadata`, the
button's own signed payload and where it was pressed: on submission the payload is
verified again for the chat the submitter is in, so a form's topic is never read from
anything a person typed or could edit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot import buttons
from bot.adapters.slack.commands import Origin
from bot.domain import Action, ChatKind, Command
from bot.topics.card import shorten
from handlers.ask import MAX_QUESTION
from handlers.ask_about import PLACEHOLDER, ask_command, prompt_text

CALLBACK_ID = "pw_ask"
BLOCK_ID = "question"
ACTION_ID = "text"
QUESTION_CHARS = MAX_QUESTION - 100  # room for the topic before the colon
LABEL_CHARS = 2000  # an input block's label
PLACEHOLDER_CHARS = 150
EMPTY = "Type a question, e.g. which rewards do web agents use?"
INVALID = "This form is not valid here; nothing was asked. Press the Ask button again."


def ask_view(name: str, where: Origin, payload: str) -> dict[str, Any]:
    """The form asking about topic `name`, for a button pressed at `where`."""
    metadata = {"team": where.team, "channel": where.channel, "payload": payload}
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "title": {"type": "plain_text", "text": "Ask paperwatch"},
        "submit": {"type": "plain_text", "text": "Ask"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": json.dumps(metadata),
        "blocks": [
            {
                "type": "input",
                "block_id": BLOCK_ID,
                "label": {"type": "plain_text", "text": shorten(prompt_text(name), LABEL_CHARS)},
                "element": {
                    "type": "plain_text_input",
                    "action_id": ACTION_ID,
                    "multiline": True,
                    "max_length": QUESTION_CHARS,
                    "placeholder": {
                        "type": "plain_text",
                        "text": shorten(PLACEHOLDER, PLACEHOLDER_CHARS),
                    },
                },
            }
        ],
    }


@dataclass(frozen=True, slots=True)
class Submission:
    """A submitted form: where its button was pressed, by whom, and the question."""

    where: Origin
    question: str
    command: Command | None  # None when the form's payload does not verify


def question_of(view: dict[str, Any]) -> str:
    values = ((view.get("state") or {}).get("values") or {}).get(BLOCK_ID) or {}
    return str((values.get(ACTION_ID) or {}).get("value") or "")


def read_submission(body: dict[str, Any], key: bytes) -> Submission:
    """The question a `view_submission` body asks, as the /ask command to run."""
    view = body.get("view") or {}
    user = str((body.get("user") or {}).get("id", ""))
    try:
        metadata = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        metadata = {}
    if not isinstance(metadata, dict):
        metadata = {}
    team = str((body.get("team") or {}).get("id") or metadata.get("team") or "")
    channel = metadata.get("channel")
    where = Origin(team, channel if isinstance(channel, str) and channel else None, user)
    question = question_of(view)
    button = buttons.decode(str(metadata.get("payload") or ""), where.chat.external_id, key)
    if button is None or button.action is not Action.ASK or metadata.get("team") != team:
        return Submission(where, question, None)
    kind = ChatKind.CHANNEL if where.is_channel else ChatKind.PRIVATE
    command = ask_command(button.arg, question, chat=where.chat, chat_kind=kind, user_id=user)
    return Submission(where, question, command)
