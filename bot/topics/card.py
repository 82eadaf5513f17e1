"""The paper card: what every alert, digest and paper list shows of one paper.

`paper_item` decides what a chat is shown of a paper: which of its tags, under which names,
and a TL;DR or not. Pure: the catalog is an input.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from bot.domain import Paper, PaperItem, Subscription
from bot.topics.catalog import Catalog
from bot.topics.tagline import tag_line
from bot.topics.tldr import tldr


def tag_name(catalog: Catalog, tag: str, subs: Sequence[Subscription] = ()) -> str:
    """What a person calls a tag: the topic's name, or the query they typed."""
    topic = catalog.by_slug(tag)
    if topic is not None:
        return topic.name
    return next((sub.label for sub in subs if sub.tag == tag), tag)


def paper_item(
    catalog: Catalog,
    paper: Paper,
    followed: Collection[str],
    subs: Sequence[Subscription] = (),
    *,
    summary: bool = False,
) -> PaperItem:
    """`paper` as shown to a chat that follows the tags `followed` through `subs`: its tag line
    (followed tags first, then the most specific others: `bot.topics.tagline`) under the names
    the chat knows, and with `summary` a TL;DR of its abstract."""
    order = [*(s.tag for s in subs if s.tag in followed), *sorted(followed)]
    line = tag_line(catalog, paper.tags, list(dict.fromkeys(order)))
    return PaperItem(
        paper=paper,
        tags=tuple(tag_name(catalog, t, subs) for t in line.shown),
        followed_tags=tuple(tag_name(catalog, t, subs) for t in line.followed),
        more_tags=line.hidden,
        tldr=tldr(paper.abstract) if summary else "",
    )
