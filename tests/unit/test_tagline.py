"""The tag line rule (bot.topics.tagline): followed topics first, then at most a few of the
most specific others, the rest counted."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bot.domain import Topic
from bot.topics import tagline
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.tagline import MAX_OTHERS, MAX_TAGS, tag_line

# A small tree, in catalog order:
# ml > rl > rl-agents > web-rl ; ml > vision ; llm > agents > web-agents ; robotics ; optimization
CATALOG = Catalog(
    topics=(
        Topic("ml", "Machine Learning"),
        Topic("rl", "Reinforcement Learning", parent="ml"),
        Topic("rl-agents", "RL for LLM Agents", parent="rl"),
        Topic("web-rl", "RL for Web Agents", parent="rl-agents"),
        Topic("vision", "Computer Vision", parent="ml"),
        Topic("llm", "Large Language Models"),
        Topic("agents", "LLM Agents", parent="llm"),
        Topic("web-agents", "Web Agents", parent="agents"),
        Topic("robotics", "Robotics"),
        Topic("optimization", "Optimization"),
    )
)


def test_followed_topics_come_first_in_catalog_order() -> None:
    line = tag_line(CATALOG, ["robotics", "vision", "llm"], ["robotics", "vision"])
    assert line.followed == ("vision", "robotics")  # catalog order, not the order followed
    assert line.shown[:2] == ("vision", "robotics")
    assert line.others == ("llm",)


def test_a_parent_is_dropped_when_a_descendant_is_on_the_paper() -> None:
    line = tag_line(CATALOG, ["ml", "rl", "rl-agents", "llm", "agents"], ["rl-agents"])
    assert line.followed == ("rl-agents",)
    # ml and rl are implied by rl-agents, llm by agents
    assert line.others == ("agents",)
    assert line.hidden == 3


def test_a_grandparent_is_dropped_too() -> None:
    line = tag_line(CATALOG, ["web-rl", "ml", "robotics"], ["robotics"])
    assert line.others == ("web-rl",)
    assert line.hidden == 1


def test_a_followed_parent_is_still_shown() -> None:
    line = tag_line(CATALOG, ["rl", "rl-agents"], ["rl"])
    assert line.followed == ("rl",)
    assert line.others == ("rl-agents",)


def test_at_most_max_others_rarest_first_then_catalog_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rates = {"robotics": 0.02, "optimization": 0.01, "vision": 0.2, "web-agents": 0.01}
    monkeypatch.setattr(tagline, "topic_rates", lambda: rates)
    tags = ["robotics", "optimization", "vision", "web-rl", "web-agents", "llm"]
    line = tag_line(CATALOG, tags, ["llm"])
    # web-rl has no rate (a topic of one's own): rare; then 0.01 in catalog order; then 0.02
    assert line.others == ("web-rl", "web-agents", "optimization", "robotics")[:MAX_OTHERS]
    assert line.hidden == len(tags) - 1 - MAX_OTHERS


def test_every_bundled_topic_has_a_rate_from_todays_catalog() -> None:
    """topic_rates.tsv is made from the catalog it names; after a catalog edit, run
    `python -m scripts.topic_rates` (the rates are shares of real papers the rules tag)."""
    path = Path(tagline.__file__).with_name("topic_rates.tsv")
    header = path.read_text(encoding="utf-8").splitlines()[0]
    catalog_file = Path(tagline.__file__).with_name("catalog.toml")
    sha = hashlib.sha256(catalog_file.read_bytes()).hexdigest()
    assert f"catalog sha256 {sha}" in header, "run `python -m scripts.topic_rates`"
    rates = tagline.topic_rates()
    assert {t.slug for t in load_catalog().topics} == set(rates)
    assert rates["large-language-models"] > rates["agentic-search"] > 0


def test_the_cap_can_be_chosen() -> None:
    line = tag_line(CATALOG, ["robotics", "optimization", "vision"], [], others=1)
    assert line.shown == ("vision",)
    assert line.hidden == 2


def test_the_whole_line_is_capped_followed_tags_first() -> None:
    tags = [t.slug for t in CATALOG.topics]
    line = tag_line(CATALOG, tags, tags, limit=4)
    assert line.followed == ("ml", "rl", "rl-agents", "web-rl")
    assert line.others == ()
    assert line.hidden == len(tags) - 4
    assert len(tag_line(CATALOG, tags, tags).shown) == MAX_TAGS


def test_queries_are_shown_only_to_a_chat_that_follows_them_after_its_topics() -> None:
    tags = ["q:2222", "robotics", "q:1111", "q:9999"]
    line = tag_line(CATALOG, tags, ["q:1111", "robotics", "q:2222"])
    assert line.followed == ("robotics", "q:1111", "q:2222")  # queries in the chat's order
    assert "q:9999" not in line.shown
    assert line.hidden == 0  # another chat's query is not this chat's to see or count


@pytest.mark.parametrize(
    "tag",
    ["<b>bold</b>", "Hallucination\n\x1b[2J", "", "ml ", "ML", "curated"],
)
def test_tags_outside_the_catalog_and_not_followed_are_never_shown(tag: str) -> None:
    line = tag_line(CATALOG, [tag, "robotics"], [])
    assert line.shown == ("robotics",)
    assert line.hidden == 0


def test_duplicates_count_once() -> None:
    line = tag_line(CATALOG, ["robotics", "robotics", "vision"], ["vision", "vision"])
    assert line.followed == ("vision",)
    assert line.others == ("robotics",)
    assert line.hidden == 0


def test_a_paper_without_tags() -> None:
    line = tag_line(CATALOG, [], ["rl"])
    assert line.shown == () and line.hidden == 0


def test_the_bundled_catalog_drops_parents_of_the_tags_shown() -> None:
    catalog = load_catalog()
    child = next(t for t in catalog.topics if t.parent and catalog.by_slug(t.parent).parent)
    parent = catalog.by_slug(child.parent)
    tags = [parent.parent, parent.slug, child.slug]
    line = tag_line(catalog, tags, [])
    assert line.others == (child.slug,)
    assert line.hidden == 2
