"""Alerts and digests on every platform show the short tag line: the followed topic first,
then a few of the most specific others and "+N"; the mute buttons offer what is shown.

The paper is the bundled sample's AIGB-R1 with the tags ingest gives it (its curated tags
plus every catalog rule that matches): a dozen or more topics.
"""

from __future__ import annotations

import re

import pytest

from bot import buttons
from bot.adapters.console import render_reply
from bot.adapters.slack import render as slack_render
from bot.adapters.telegram import render as telegram_render
from bot.adapters.telegram.render import to_messages
from bot.domain import Action, Paper, PaperItem, Reply, Subscription, SubscriptionKind, slugify
from bot.services.ingest import rule_tags, sample_papers
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.content import Audience, alert, digest
from bot.topics.tagline import MAX_OTHERS, MAX_TAGS

FOLLOWED = "rl-for-llm-agents"
KEY = buttons.button_key("123456:test")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def paper(catalog: Catalog) -> Paper:
    """AIGB-R1 as storage returns it: curated and rule tags, sorted, once each."""
    (sample,) = [p for p in sample_papers() if p.title.startswith("AIGB-R1")]
    curated = {slugify(t) for t in sample.tags}
    rules = {tag for _, tag, _ in rule_tags(catalog, [], [sample])}
    tags = tuple(sorted(t for t in curated | rules if catalog.by_slug(t)))
    assert FOLLOWED in tags and len(tags) >= 8  # the precondition: a paper with many tags
    return Paper(**{**{f: getattr(sample, f) for f in sample.__dataclass_fields__}, "tags": tags})


@pytest.fixture(scope="module")
def audience(catalog: Catalog) -> Audience:
    name = catalog.by_slug(FOLLOWED).name
    sub = Subscription(1, 1, SubscriptionKind.TOPIC, FOLLOWED, name, FOLLOWED)
    return Audience((sub,), ())


@pytest.fixture(scope="module")
def reply(catalog: Catalog, paper: Paper, audience: Audience) -> Reply:
    found = alert(catalog, paper, audience)
    assert found is not None
    return found


def names(line: str) -> list[str]:
    """The tag names of a rendered tag line, without markup, marks and "+N"."""
    line = re.sub(r"\s\+\d+$", "", line)
    return [re.sub(r"</?b>|\*|★", "", n).strip() for n in line.split(", ")]


def hidden(line: str) -> int:
    found = re.search(r"\s\+(\d+)$", line)
    return int(found.group(1)) if found else 0


def check(line: str, paper: Paper) -> None:
    shown = names(line)
    assert shown[0] == "RL for LLM Agents"
    assert 2 <= len(shown) <= 1 + MAX_OTHERS
    assert len(shown) + hidden(line) == len(paper.tags)


def test_telegram_alert(reply: Reply, paper: Paper) -> None:
    (message,) = to_messages(reply, "1", KEY)
    (line,) = [ln for ln in message.html.splitlines() if ln.startswith("🏷 ")]
    assert line.startswith("🏷 <b>RL for LLM Agents</b>, ")
    check(line.removeprefix("🏷 "), paper)


def test_slack_alert(reply: Reply, paper: Paper) -> None:
    (message,) = slack_render.render(reply)
    text = "\n".join(b["text"]["text"] for b in message["blocks"] if b["type"] == "section")
    (line,) = [ln for ln in text.splitlines() if ln.startswith(":label: ")]
    assert line.startswith(":label: *RL for LLM Agents*, ")
    check(line.removeprefix(":label: "), paper)


def test_console_alert(reply: Reply, paper: Paper) -> None:
    (line,) = [ln for ln in render_reply(reply).splitlines() if ln.startswith("  tags: ")]
    assert line.startswith("  tags: RL for LLM Agents ★, ")
    check(line.removeprefix("  tags: "), paper)


def test_digest(catalog: Catalog, paper: Paper, audience: Audience) -> None:
    found = digest(catalog, [paper], audience, "Daily digest")
    assert found is not None
    (line,) = [ln for ln in render_reply(found).splitlines() if ln.startswith("  tags: ")]
    check(line.removeprefix("  tags: "), paper)


def test_mute_buttons_offer_tags_the_alert_shows(reply: Reply) -> None:
    (item,) = reply.papers
    mutes = [b for row in reply.buttons for b in row if b.action is Action.MUTE]
    assert mutes
    for button in mutes:
        name = button.text.removeprefix("Mute ")
        assert name in item.tags and name not in item.followed_tags


def test_a_parent_of_a_shown_tag_is_not_shown(catalog: Catalog, reply: Reply) -> None:
    (item,) = reply.papers
    shown = {t.slug for t in catalog.topics if t.name in item.tags}
    parents = {catalog.by_slug(s).parent for s in shown} - {None}
    assert not parents & shown - {FOLLOWED}


def test_mute_buttons_offer_the_specific_tag_not_its_parents(
    catalog: Catalog, paper: Paper, audience: Audience
) -> None:
    tags = ("large-language-models", "llm-agents", FOLLOWED, "web-agents")  # storage order
    found = alert(catalog, Paper(paper.arxiv_id, paper.title, tags=tags), audience)
    assert found is not None
    mutes = [b for row in found.buttons for b in row if b.action is Action.MUTE]
    assert [(b.text, b.arg) for b in mutes] == [("Mute Web Agents", "web-agents")]
    (item,) = found.papers
    assert item.tags == ("RL for LLM Agents", "Web Agents") and item.more_tags == 2


def test_a_longer_line_from_elsewhere_is_cut_and_counted(paper: Paper) -> None:
    long_name = "A followed topic " + "x" * 80
    names = (long_name, *(f"Topic {n}" for n in range(11)))
    item = PaperItem(paper, tags=names, followed_tags=(long_name,), more_tags=1)
    html = telegram_render.render(Reply(papers=(item,)))[0]
    (line,) = [ln for ln in html.splitlines() if ln.startswith("🏷 ")]
    assert line.startswith("🏷 <b>A followed topic x")  # marked though shortened
    assert line.endswith(f"Topic {MAX_TAGS - 2} +{len(names) - MAX_TAGS + 1}")
    text = slack_render.render(Reply(papers=(item,)))[0]["blocks"][0]["text"]["text"]
    assert text.splitlines()[-1].endswith(f"Topic {MAX_TAGS - 2} +{len(names) - MAX_TAGS + 1}")
