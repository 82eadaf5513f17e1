"""Slack payloads as neutral `Command`s: pure, no network, no state.

Two payloads carry commands: a slash command (`/paperwatch <command> [args]`, its form
fields) and a button press (a `block_actions` body, the button already verified and
decoded by the caller, which holds the signing key). A channel's subscriptions belong to
the channel; in a DM (or the Home tab), to the person.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from bot.domain import Button, ChatKind, ChatRef, Command, Platform, Role
from handlers.text import parse_command

SLASH_COMMAND = "/paperwatch"


def chat_key(team: str, channel: str | None, user: str) -> str:
    """Channels own their subscriptions; in a DM (or the Home tab) the person does."""
    if channel and not channel.startswith("D"):
        return f"{team}:{channel}"
    return f"{team}:{user}"


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a payload came from: the workspace, the channel (None on the Home tab), who."""

    team: str
    channel: str | None
    user: str

    @property
    def is_channel(self) -> bool:
        """A shared channel, as opposed to a DM with the app or the Home tab."""
        return bool(self.channel) and not str(self.channel).startswith("D")

    @property
    def chat(self) -> ChatRef:
        return ChatRef(Platform.SLACK, chat_key(self.team, self.channel, self.user))

    @property
    def where(self) -> str:
        """Where to answer: the channel, or (from the Home tab) the person."""
        return self.channel or self.user


def origin(payload: dict[str, Any]) -> Origin:
    """The origin of a slash command's fields or of a `block_actions` body."""
    if "actions" in payload:
        return Origin(
            team=(payload.get("team") or {}).get("id", ""),
            channel=(payload.get("channel") or {}).get("id"),
            user=(payload.get("user") or {}).get("id", ""),
        )
    return Origin(payload["team_id"], payload["channel_id"], payload["user_id"])


def known_role(
    user: str, is_channel: bool, *, admins_only: bool, allowed_users: Collection[str]
) -> Role:
    """A DM (or the Home tab) is the person's own. In a channel anyone may change it,
    unless SLACK_ADMINS_ONLY: then the listed SLACK_ALLOWED_USERS, or a lookup."""
    if not is_channel:
        return Role.OWNER
    if not admins_only or user in allowed_users:
        return Role.ADMIN
    return Role.MEMBER


def to_command(
    payload: dict[str, Any],
    *,
    admins_only: bool,
    allowed_users: Collection[str],
    button: Button | None = None,
) -> Command | None:
    """The command a payload asks for, or None when it asks none.

    A button press (`actions` in the payload) is the command of `button`'s action (None
    without a button); a slash command's text is parsed, an empty one as `help`.
    """
    where = origin(payload)
    kind = ChatKind.CHANNEL if where.is_channel else ChatKind.PRIVATE
    role = known_role(
        where.user, where.is_channel, admins_only=admins_only, allowed_users=allowed_users
    )
    if "actions" in payload:
        if button is None:
            return None
        return Command(
            name=button.action.value,  # each action is the command of that name
            args=button.arg,
            chat=where.chat,
            chat_kind=kind,
            user_id=where.user,
            role=role,
        )
    text = (payload.get("text") or "").strip() or "help"
    return parse_command("/" + text, where.chat, chat_kind=kind, user_id=where.user, role=role)
