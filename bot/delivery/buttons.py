"""Button payloads that fit Telegram's 64 bytes and cannot be forged or replayed elsewhere.

A payload is `<action code>|<arg>|<signature>`; the signature is an HMAC over the
chat the button was sent to, so a button pressed in any other chat (a forwarded
message, a hand-made callback) fails verification and changes nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from bot.domain import Action, Button

MAX_BYTES = 64
_SIG_CHARS = 11
_CODES = {
    Action.FOLLOW: "f",
    Action.UNFOLLOW: "u",
    Action.MUTE: "m",
    Action.WHY: "w",
    Action.LATEST: "l",
}
_ACTIONS = {code: action for action, code in _CODES.items()}


def button_key(secret: str) -> bytes:
    """A signing key derived from a deployment secret (e.g. the bot token)."""
    return hashlib.sha256(b"paperwatch-buttons\0" + secret.encode()).digest()


def _signature(key: bytes, chat: str, code: str, arg: str) -> str:
    digest = hmac.digest(key, f"{chat}\0{code}\0{arg}".encode(), "sha256")
    return base64.urlsafe_b64encode(digest).decode()[:_SIG_CHARS]


def encode(button: Button, chat: str, key: bytes) -> str | None:
    """The payload, or None when the argument is too long to fit (the button is dropped)."""
    code = _CODES[button.action]
    data = f"{code}|{button.arg}|{_signature(key, chat, code, button.arg)}"
    return data if len(data.encode()) <= MAX_BYTES else None


def decode(data: str, chat: str, key: bytes) -> Button | None:
    """The button, if `data` was signed for this chat; None for anything else."""
    parts = data.split("|")
    if len(parts) != 3 or len(data.encode()) > MAX_BYTES:
        return None
    code, arg, signature = parts
    action = _ACTIONS.get(code)
    if action is None or not arg:
        return None
    if not hmac.compare_digest(signature, _signature(key, chat, code, arg)):
        return None
    return Button(text="", action=action, arg=arg)
