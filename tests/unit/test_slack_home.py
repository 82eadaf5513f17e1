"""The Home tab is built from the chat's overview (the lines /list, /muted and /digest show),
not from command replies."""

from __future__ import annotations

from bot.adapters.slack.home import MAX_HOME_BLOCKS, home_view
from handlers.overview import Overview


def test_home_shows_following_muted_and_delivery_in_that_order() -> None:
    view = home_view(
        Overview(
            following=("You follow 1 topic:", "• Web Agents"),
            muted=("Nothing is muted.",),
            delivery=("A daily digest at 08:00, time zone UTC.",),
            switches=("Momentum alerts: on (/momentum alerts on|off).",),
        )
    )
    assert view["type"] == "home"
    texts = [b["text"]["text"] for b in view["blocks"] if b["type"] == "section"]
    assert texts == [
        "You follow 1 topic:\n• Web Agents",
        "Nothing is muted.",
        "A daily digest at 08:00, time zone UTC.\n"
        "Momentum alerts: on (/paperwatch momentum alerts on|off).",
    ]
    assert view["blocks"][0]["type"] == "header"
    assert "/paperwatch follow" in view["blocks"][-1]["elements"][0]["text"]


def test_home_escapes_and_stays_within_slacks_block_limit() -> None:
    many = tuple(f"• <b>{i}</b> & " + "x" * 2990 for i in range(150))
    view = home_view(Overview(following=many, muted=(), delivery=()))
    assert len(view["blocks"]) <= MAX_HOME_BLOCKS
    assert "<b>" not in str(view) and "&lt;b&gt;" in str(view)


def test_home_names_commands_as_slack_users_type_them() -> None:
    view = home_view(
        Overview(
            following=("You follow 20 topics:", "Page 1 of 2: /list 2 for more."),
            muted=("Nothing is muted.", "Usage: /mute <tag> [in <followed topic>]"),
            delivery=("A daily digest at 08:00, time zone UTC.",),
        )
    )
    texts = "\n".join(b["text"]["text"] for b in view["blocks"] if b["type"] == "section")
    assert "/paperwatch list 2 for more" in texts and "Usage: /paperwatch mute" in texts
    assert " /list" not in texts and " /mute" not in texts
