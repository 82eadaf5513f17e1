"""`handlers.lookup.find_subscription`: the one reading of "which followed thing is meant"."""

from __future__ import annotations

import pytest

from bot.domain import Subscription, SubscriptionKind
from bot.topics.catalog import Catalog
from bot.topics.query import parse_query
from bot.topics.tag_rules import query_key
from handlers.lookup import find_subscription

TOPIC = Subscription(
    1, 1, SubscriptionKind.TOPIC, "rl-for-llm-agents", "RL for LLM Agents", "rl-for-llm-agents"
)
QUERY = Subscription(
    2,
    1,
    SubscriptionKind.QUERY,
    str(parse_query("agent* AND survey")),
    "(agent*) AND survey",  # the label: as typed at /follow
    query_key(parse_query("agent* AND survey")),
)
# A one-word query whose canonical text is also a catalog slug: kinds never mix.
WORD = Subscription(3, 1, SubscriptionKind.QUERY, "web-agents", '"web-agents"', "q:word")
SUBS = (TOPIC, QUERY, WORD)


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("rl-for-llm-agents", TOPIC),  # tag and target
        ("  rl for llm AGENTS ", TOPIC),  # label, any case and spacing
        ("RL for LLM Agnets", TOPIC),  # a typo, read as /follow reads it
        ("agentic reinforcement learning", TOPIC),  # an alias
        (QUERY.tag, QUERY),  # a button's argument
        ("agent* AND survey", QUERY),  # the canonical text
        ("(agent*) AND (survey)", QUERY),  # parses to it
        ("survey AND agent*", None),  # another query (AND keeps its order)
        ("(agent*) AND NOT survey", None),
        ("(unbalanced AND", None),  # not a query at all
        ("Web Agents", None),  # the catalog topic, which only a query's text resembles
        ("Reinforcement Learning", None),  # a catalog topic this chat does not follow
        ("", None),
    ],
)
def test_one_reading(small_catalog: Catalog, typed: str, meant: Subscription | None) -> None:
    assert find_subscription(typed, SUBS, small_catalog) == meant


def test_a_tag_beats_a_label(small_catalog: Catalog) -> None:
    """Buttons carry tags; a label that happens to equal another's tag loses to it."""
    other = Subscription(4, 1, SubscriptionKind.QUERY, "x", "rl-for-llm-agents", "q:x")
    assert find_subscription("rl-for-llm-agents", (other, TOPIC), small_catalog) == TOPIC
