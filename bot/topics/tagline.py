"""Which of a paper's tags a message shows: the rule every alert, digest and list uses.

A paper can carry a dozen tags (a broad field, its subfields and a few neighbours), and a
line of thirteen names is one nobody reads or mutes from. The line shows:

1. the followed tags the paper has: catalog topics in catalog order, then the chat's own
   queries in the order the chat follows them (a query's tag is shown only to a chat
   that follows it; it is a hash, not a name, to anyone else);
2. then at most `MAX_OTHERS` of its other catalog topics, only the most specific ones: a
   topic is left out when one of its descendants (child, grandchild, ...) is also on the
   paper, because the narrower name already says it ("Web Agents" implies "LLM Agents"
   and "Large Language Models"); the rarest first, by the share of real papers each
   topic tags (`topic_rates.tsv`, made by `python -m scripts.topic_rates`), because a
   rare topic says more about a paper than one most of its neighbours carry; then
   catalog order. A topic without a rate (a deployment's own) counts as rare.

On the seed page's 30 curated papers this ordering took the line's agreement with the
page's tags (bench/relevance.py, "alert tag lines") from F1 0.234 (deepest first) to 0.508.

Everything else is counted (`TagLine.hidden`, shown as "+N") and listed by `/why`. Tags
that are neither catalog topics nor followed by the chat are never shown, whatever text
they hold. Pure: the catalog is an input, nothing is read or written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from bot.topics.catalog import Catalog

MAX_OTHERS = 3
"""Other (not followed) topics shown after the followed ones.

Three because the line has to be read at a glance on a phone: with the one or two
followed topics that brought the paper it stays at four or five names, one line in
Telegram and Slack, the size of the seed page's own tag rows (three or four tags, then
"+N"); and it is enough to offer the two "Mute <tag>" buttons an alert carries and one
more name to judge the paper by.
"""

MAX_TAGS = 8
"""The whole line at most, followed tags included, so that a paper matching many
followed topics still renders as one short line (the rest are counted in "+N")."""


@dataclass(frozen=True, slots=True)
class TagLine:
    """The tags a message shows for one paper, as tag keys (slugs or query keys)."""

    followed: tuple[str, ...]
    others: tuple[str, ...]
    hidden: int  # visible tags not shown here; `/why` lists them

    @property
    def shown(self) -> tuple[str, ...]:
        return self.followed + self.others


@dataclass(frozen=True, slots=True)
class _Place:
    position: int  # in the catalog
    ancestors: frozenset[str]


def tag_line(
    catalog: Catalog,
    tags: Iterable[str],
    followed: Sequence[str],
    *,
    others: int = MAX_OTHERS,
    limit: int = MAX_TAGS,
) -> TagLine:
    """The tags to show for a paper carrying `tags`, to a chat following `followed` (see
    the module docstring for the rule). Duplicates and unknown tags are ignored."""
    places = _places(catalog)
    present = set(tags)
    wanted = set(followed)
    topics = sorted((t for t in present if t in places), key=lambda t: places[t].position)
    queries = [t for t in dict.fromkeys(followed) if t in present and t not in places]
    mine = [t for t in topics if t in wanted] + queries
    implied = set().union(*(places[t].ancestors for t in topics))
    specific = [t for t in topics if t not in wanted and t not in implied]
    rates = topic_rates()
    specific.sort(key=lambda t: (rates.get(t, 0.0), places[t].position))
    shown_followed = tuple(mine[:limit])
    shown_others = tuple(specific[: max(0, min(others, limit - len(shown_followed)))])
    visible = len(topics) + len(queries)
    return TagLine(shown_followed, shown_others, visible - len(shown_followed) - len(shown_others))


@cache
def topic_rates() -> dict[str, float]:
    """Slug -> share of real papers its rule tags (see the module docstring)."""
    text = resources.files("bot.topics").joinpath("topic_rates.tsv").read_text("utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {slug: float(share) for slug, share in rows}


@cache  # a catalog is immutable and compared by identity
def _places(catalog: Catalog) -> dict[str, _Place]:
    places: dict[str, _Place] = {}
    for position, topic in enumerate(catalog.topics):
        ancestors: list[str] = []
        parent = topic.parent
        while parent is not None and parent not in ancestors and parent != topic.slug:
            ancestors.append(parent)
            found = catalog.by_slug(parent)
            parent = found.parent if found is not None else None
        places[topic.slug] = _Place(position, frozenset(ancestors))
    return places
