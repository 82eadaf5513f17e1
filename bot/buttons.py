"""Button payloads that fit Telegram's 64 bytes and cannot be forged, replayed elsewhere,
or used for ever.

A payload is `<action code><issue day><signature><arg>`: one character, three (the day
it was made, in base 36 days since 2020-01-01), eleven (an HMAC over the chat the button
was sent to, the code, the day and the argument), then the argument, so an argument of up
to 49 bytes fits (the longest catalog slug has 48). A button pressed in any other chat (a
forwarded message, a hand-made callback) fails verification and changes nothing; so does
one older than `MAX_AGE`.

A bundled sample paper's key ("sample:" and a slug of up to 56 characters) is longer than
that, so its "Why this paper?" button carries the slug packed: read as a number in the
slug's 37 letters (bijective, so the length needs no room), written in the 64 characters of
URL-safe base64, under an action code of its own; a slug of 56 characters needs 49.

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
    Action.ASK: "a",
    Action.MORE: "p",  # plus
    Action.LESS: "n",  # minus
}
_ACTIONS = {code: action for action, code in _CODES.items()}
_WHY_SAMPLE = "s"  # Action.WHY of a sample paper, its slug packed
_SAMPLE = "sample:"
_SLUG_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-"
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


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


def _convert(digits: str, source: str, target: str) -> str:
    """`digits` (bijective numeration over `source`: no zero digit, so no length is lost)
    written the same way over `target`."""
    n = 0
    for ch in digits:
        n = n * len(source) + source.index(ch) + 1
    out: list[str] = []
    while n:
        n, d = divmod(n - 1, len(target))
        out.append(target[d])
    return "".join(reversed(out))


def _packed(button: Button) -> tuple[str, str]:
    """(action code, argument as sent): a sample paper's key packed for "Why this paper?"."""
    slug = button.arg.removeprefix(_SAMPLE)
    if button.action is Action.WHY and slug != button.arg and set(slug) <= set(_SLUG_CHARS):
        return _WHY_SAMPLE, _convert(slug, _SLUG_CHARS, _B64)
    return _CODES[button.action], button.arg


def _unpacked(code: str, arg: str) -> tuple[Action | None, str]:
    if code != _WHY_SAMPLE:
        return _ACTIONS.get(code), arg
    if not set(arg) <= set(_B64):
        return None, arg
    return Action.WHY, _SAMPLE + _convert(arg, _B64, _SLUG_CHARS)


def encode(button: Button, chat: str, key: bytes, *, on: date | None = None) -> str | None:
    """The payload issued `on` (today), or None when the argument is too long to fit (the
    button is dropped)."""
    (code, arg), day = _packed(button), _day(on or today())
    data = f"{code}{day}{_signature(key, chat, code, day, arg)}{arg}"
    return data if len(data.encode()) <= MAX_BYTES else None


def decode(data: str, chat: str, key: bytes, *, on: date | None = None) -> Button | None:
    """The button, if `data` was signed for this chat and is at most `MAX_AGE` old `on`
    (today); None for anything else."""
    if len(data.encode()) > MAX_BYTES or len(data) <= _HEAD:
        return None
    code, day = data[0], data[1 : 1 + _DAY_CHARS]
    signature, sent = data[1 + _DAY_CHARS : _HEAD], data[_HEAD:]
    issued = _issued(day)
    if issued is None or (code not in _ACTIONS and code != _WHY_SAMPLE):
        return None
    if not hmac.compare_digest(signature, _signature(key, chat, code, day, sent)):
        return None
    age = (on or today()) - issued
    if not timedelta(days=-1) <= age <= MAX_AGE:  # a day's grace for clocks that disagree
        return None
    action, arg = _unpacked(code, sent)
    return Button(text="", action=action, arg=arg) if action is not None else None
