"""Which of a chat's subscriptions a person means by what they typed.

One rule for every command that names something the chat follows (/unfollow, /latest,
/momentum, /mute <tag> in <followed>), so the same words find the same subscription in
each of them. The first step that matches wins:

1. the subscription's tag, exactly: buttons carry tags, and a query's tag (`q:...`) is
   no name a person would type;
2. its label (the topic's name, or the query as it was typed at /follow) or its target
   (the topic's slug, or the query's canonical text), in any case;
3. text that reads as a query (`looks_like_query`): the followed query it parses to, so
   spacing, redundant parentheses and the like do not matter;
4. any other text: the catalog topic it names (aliases and typos included, as /follow
   reads them: `bot.topics.resolve`), when the chat follows it.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.domain import Subscription, SubscriptionKind
from bot.topics.catalog import Catalog
from bot.topics.query import parse_query
from bot.topics.query_tree import QueryError
from bot.topics.resolve import looks_like_query, resolve_topic


def find_subscription(
    text: str, subs: Sequence[Subscription], catalog: Catalog
) -> Subscription | None:
    """The subscription in `subs` that `text` names (rules in the module docstring)."""
    typed = text.strip()
    if not typed:
        return None
    tagged = next((s for s in subs if s.tag == typed), None)
    if tagged is not None:
        return tagged
    wanted = typed.lower()
    named = next((s for s in subs if wanted in (s.label.lower(), s.target.lower())), None)
    if named is not None:
        return named
    if looks_like_query(typed):
        try:
            target = str(parse_query(typed))
        except QueryError:
            return None
        return _first(subs, SubscriptionKind.QUERY, target)
    topic = resolve_topic(typed, catalog).topic
    return _first(subs, SubscriptionKind.TOPIC, topic.slug) if topic else None


def _first(
    subs: Sequence[Subscription], kind: SubscriptionKind, target: str
) -> Subscription | None:
    return next((s for s in subs if s.kind is kind and s.target == target), None)
