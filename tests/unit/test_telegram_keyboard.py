"""Alert messages for Telegram: shared work (cached buttons and paper blocks) never mixes
one chat's message into another's."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from bot import buttons
from bot.adapters.telegram.render import to_messages
from bot.domain import Action, Author, Paper, Subscription, SubscriptionKind
from bot.services.ingest import sample_papers
from bot.topics.catalog import load_catalog
from bot.topics.content import Audience, alert

KEY = buttons.button_key("123456:test")
PAPER = Paper(
    arxiv_id="2611.00042",
    title="Reward shaping for web agents <fast> & cheap",
    abstract="We propose a reward model for web agents. It improves success by 12%.",
    authors=(Author("Ada Lovelace"), Author("Alan Turing")),
    categories=("cs.LG",),
    announced=date(2026, 11, 2),
    tags=("rl-for-llm-agents", "web-agents"),
)


def follows(chat_id: int, *tags: str) -> Audience:
    catalog = load_catalog()
    subs = tuple(
        Subscription(n, chat_id, SubscriptionKind.TOPIC, tag, catalog.by_slug(tag).name, tag)
        for n, tag in enumerate(tags)
    )
    return Audience(subs, ())


def callback_data(chat_id: int, audience: Audience) -> list[str]:
    reply = alert(load_catalog(), PAPER, audience)
    assert reply is not None
    (message,) = to_messages(reply, str(chat_id), KEY)
    assert message.markup is not None
    return [b.callback_data for row in message.markup.inline_keyboard for b in row]


def test_each_chat_gets_buttons_signed_for_it_alone() -> None:
    for _ in range(2):  # the second time from the cache
        mine = callback_data(111, follows(111, "rl-for-llm-agents"))
        theirs = callback_data(222, follows(222, "rl-for-llm-agents"))
        assert mine != theirs
        assert all(buttons.decode(data, "111", KEY) for data in mine)
        assert not any(buttons.decode(data, "222", KEY) for data in mine)
        assert all(buttons.decode(data, "222", KEY) for data in theirs)
    actions = [buttons.decode(data, "111", KEY).action for data in mine]
    assert actions == [
        Action.MORE,
        Action.LESS,
        Action.MUTE,
        Action.WHY,
        Action.LATEST,
        Action.UNFOLLOW,
    ]


def test_the_same_paper_shows_each_chat_what_it_follows() -> None:
    catalog = load_catalog()
    one = alert(catalog, PAPER, follows(1, "rl-for-llm-agents"))
    both = alert(catalog, PAPER, follows(2, "rl-for-llm-agents", "web-agents"))
    assert one is not None and both is not None
    (first,) = to_messages(one, "1", KEY)
    (second,) = to_messages(both, "2", KEY)
    (again,) = to_messages(one, "3", KEY)
    web = catalog.by_slug("web-agents").name
    assert f"<b>{web}</b>" in second.html and f"<b>{web}</b>" not in first.html
    assert again.html == first.html
    assert "&lt;fast&gt; &amp; cheap" in first.html


def test_a_sample_paper_keeps_its_why_button() -> None:
    """A sample paper's key ("sample:" and a slug of up to 56 characters) did not fit in
    Telegram's 64-byte callback data, so its alert came without "Why this paper?"."""
    catalog = load_catalog()
    longest = max(sample_papers(), key=lambda p: len(p.arxiv_id))
    sample = replace(longest, tags=("rl-for-llm-agents",))  # as stored: tagged by slug
    assert len(sample.arxiv_id) > buttons.MAX_BYTES - 15
    reply = alert(catalog, sample, follows(-1001234567890, "rl-for-llm-agents"))
    assert reply is not None
    (message,) = to_messages(reply, "-1001234567890", KEY)
    assert message.markup is not None
    why = [b for row in message.markup.inline_keyboard for b in row if b.text == "Why this paper?"]
    assert len(why) == 1 and len(why[0].callback_data.encode()) <= 64
    pressed = buttons.decode(why[0].callback_data, "-1001234567890", KEY)
    assert pressed is not None and (pressed.action, pressed.arg) == (Action.WHY, sample.arxiv_id)
    assert buttons.decode(why[0].callback_data, "111", KEY) is None
