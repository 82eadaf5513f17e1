"""Button payloads that fit Telegram's 64 bytes and cannot be forged, replayed elsewhere,
or used for ever.

A payload is `<action code><issue day><signature><arg>`: one character, three (the day
it was made, in base 36 days since 2020-01-01), eleven (an HMAC over the chat the button
was sent to, the code, the day and the argument), then the argument, so an argument of up
to 49 bytes fits (the longest catalog slug has 48). A button pressed in any other chat (a
forwarded message, a hand-made callback) fails verification and changes nothing; so does
one older than `MAX_AGE`.

Why 30 days: alerts and digests are acted on within days (a weekly digest within a
week); a month covers a holiday, while a payload copied out of a chat, or a button left
in a chat that changed hands, stops working soon after.

Both platform packages sign and verify with it, so it sits in bot/, outside any adapter
package, where a handler may use it too; it needs only the standard library and the domain.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, date, datetime, timedelta

from bot.domain import Action, Button

MAX_BYTES = 64
MAX_AGE = timedelta(days=30)
_EPOCH = date(2020, 1, 1)
_DAY_CHARS = 3  # base 36: 46,655 days, beyond 2147
_SIG_CHARS = 11
_HEAD = 1 + _DAY_CHARS + _SIG_CHARS
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
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


def today() -> date:
    return datetime.now(UTC).date()


def _day(when: date) -> str:
    n, digits = (when - _EPOCH).days, ""
    for _ in range(_DAY_CHARS):
        n, d = divmod(n, 36)
        digits = _DIGITS[d] + digits
    return digits


def _issued(day: str) -> date | None:
    if len(day) != _DAY_CHARS or any(c not in _DIGITS for c in day):
        return None
    return _EPOCH + timedelta(days=int(day, 36))


def _signature(key: bytes, chat: str, code: str, day: str, arg: str) -> str:
    digest = hmac.digest(key, f"{chat}\0{code}\0{day}\0{arg}".encode(), "sha256")
    return base64.urlsafe_b64encode(digest).decode()[:_SIG_CHARS]


def encode(button: Button, chat: str, key: bytes, *, on: date | None = None) -> str | None:
    """The payload issued `on` (today), or None when the argument is too long to fit (the
    button is dropped)."""
    code, day = _CODES[button.action], _day(on or today())
    data = f"{code}{day}{_signature(key, chat, code, day, button.arg)}{button.arg}"
    return data if len(data.encode()) <= MAX_BYTES else None


def decode(data: str, chat: str, key: bytes, *, on: date | None = None) -> Button | None:
    """The button, if `data` was signed for this chat and is at most `MAX_AGE` old `on`
    (today); None for anything else."""
    if len(data.encode()) > MAX_BYTES or len(data) <= _HEAD:
        return None
    code, day = data[0], data[1 : 1 + _DAY_CHARS]
    signature, arg = data[1 + _DAY_CHARS : _HEAD], data[_HEAD:]
    action, issued = _ACTIONS.get(code), _issued(day)
    if action is None or issued is None:
        return None
    if not hmac.compare_digest(signature, _signature(key, chat, code, day, arg)):
        return None
    age = (on or today()) - issued
    if not timedelta(days=-1) <= age <= MAX_AGE:  # a day's grace for clocks that disagree
        return None
    return Button(text="", action=action, arg=arg)
