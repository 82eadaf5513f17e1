"""/list: what a chat follows, a page at a time (`following_lines` is also its first page
in the overview of `handlers.overview`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from bot.domain import Action, Button, Command, Reply, Subscription, SubscriptionKind
from handlers.base import CommandSpec, Context
from handlers.subscriptions import EXAMPLE_TOPIC, page_number, usage_error

# /list shows this many subscriptions per page, each line cut to LIST_LINE characters,
# so that one page always fits one message on every platform.
LIST_PAGE = 15
LIST_LINE = 160


_KINDS = {
    SubscriptionKind.TOPIC: ("topic", "topics"),
    SubscriptionKind.QUERY: ("query", "queries"),
    SubscriptionKind.AUTHOR: ("author", "authors"),
    SubscriptionKind.LIKE: ("set of papers", "sets of papers"),
}


def followed_count(subs: Sequence[Subscription]) -> str:
    """What a chat follows, counted by kind: "1 topic", "2 topics, 1 query and 1 author"."""
    counts = Counter(sub.kind for sub in subs)
    parts = [
        f"{n} {one if n == 1 else many}"
        for kind, (one, many) in _KINDS.items()
        if (n := counts[kind])
    ]
    return " and ".join(filter(None, (", ".join(parts[:-1]), parts[-1]))) if parts else "nothing"


def _shorten(text: str, width: int = LIST_LINE) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _list_line(sub: Subscription, thresholds: Mapping[str, float]) -> str:
    if sub.kind is SubscriptionKind.LIKE:
        found = thresholds.get(sub.tag)
        shown = f" (match score above {found:.2f})" if found is not None else ""
        return "• " + _shorten(sub.label, LIST_LINE - len(shown)) + shown
    if sub.kind is SubscriptionKind.TOPIC:
        return "• " + _shorten(sub.label)
    if sub.kind is SubscriptionKind.AUTHOR:
        return "• 👤 author: " + _shorten(sub.label)
    return "• your query: " + _shorten(sub.target)


def following_lines(
    subs: Sequence[Subscription], page: int = 1, thresholds: Mapping[str, float] | None = None
) -> tuple[str, ...]:
    """What a chat follows, one page (`page` within the list): what /list shows;
    `thresholds`: a followed set's tag -> its threshold (`handlers.like_follows`)."""
    if not subs:
        return ("You don't follow any topic yet.", f"Try: /follow {EXAMPLE_TOPIC}")
    pages = -(-len(subs) // LIST_PAGE)
    shown = subs[(page - 1) * LIST_PAGE : page * LIST_PAGE]
    more = f": /list {page + 1} for more" if page < pages else "."
    footer = (f"Page {page} of {pages}{more}",) if pages > 1 else ()
    lines = [_list_line(sub, thresholds or {}) for sub in shown]
    return (f"You follow {followed_count(subs)}:", *lines, *footer)


async def list_(cmd: Command, ctx: Context) -> Reply:
    """Show what this chat follows, `LIST_PAGE` subscriptions a page: /list [page]."""
    page = page_number(cmd.args) if cmd.args else 1
    if page is None:
        return usage_error(LIST.usage, "Which page? Give its number, e.g. /list 2.")
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        thresholds = {}
        for sub in subs[(page - 1) * LIST_PAGE : page * LIST_PAGE]:
            if sub.kind is SubscriptionKind.LIKE and (found := await uow.like_sets.get(sub.tag)):
                thresholds[sub.tag] = found.threshold
    pages = -(-len(subs) // LIST_PAGE)
    if subs and page > pages:  # with nothing followed, every page says so
        return usage_error(LIST.usage, f"There is no page {page}: the list has {pages}.")
    return Reply(
        lines=following_lines(subs, page, thresholds),
        buttons=tuple(
            (Button(_shorten(f"Unfollow {s.label}", 60), Action.UNFOLLOW, s.tag),)
            for s in subs[(page - 1) * LIST_PAGE : page * LIST_PAGE]
        ),
    )


LIST = CommandSpec("list", list_, "show the topics this chat follows", "/list [page]")
