"""Topic momentum: /momentum [topic], /momentum alerts on|off, /trending.

Figures run up to the newest announcement in the index (never after today), so a
weekend or a stale poller does not read as a drop; when that day is more than
`STALE_DAYS` old the heading says "newest paper <day>" rather than "up to". Rates,
"(trending)" and /trending wait until the index covers the weeks they compare
(`bot.topics.momentum`); until then the replies say what is known and how much the index
holds. Sample papers never count. `momentum_chart` gives adapters that can send images
the PNG of one topic (its covered weeks).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from datetime import date, timedelta

from bot.charts import momentum_png
from bot.domain import Action, Button, Command, Reply, Topic
from bot.ports import MomentumStore
from bot.topics.card import tag_name
from bot.topics.content import ask_rows
from bot.topics.momentum import Momentum, coverage_note, sentence, sparkline
from bot.topics.resolve import resolve_topic
from bot.topics.spike_rule import SpikeVerdict, is_spike
from handlers.base import QUERY_ONLY_ARGS, CommandSpec, Context
from handlers.lookup import find_subscription
from handlers.subscriptions import EXAMPLE_TOPIC, unknown_topic, usage_error

WEEKS = 26
SHOWN = 10  # followed topics shown by /momentum without a topic
TRENDING_SHOWN = 5
STALE_DAYS = 7  # a newest paper older than this is named as such, not as "up to"

_SWITCH = {"on": True, "off": False}


async def _as_of(repo: MomentumStore, ctx: Context) -> date:
    today = ctx.clock().date()
    return await repo.latest_announced(today) or today


def _block(name: str, m: Momentum, *, note: bool = True) -> list[str]:
    """Two lines per topic: the sentence, then the sparkline of the covered weeks (none
    before the index covers a whole week)."""
    marker = " (trending)" if is_spike(m) else ""
    lines = [f"{name}{marker}: {sentence(m, note=note)}"]
    if m.known_weeks:
        lines.append(f"{sparkline(m.known_weekly)} weekly, oldest first")
    return lines


def _stale(as_of: date, ctx: Context) -> bool:
    return ctx.clock().date() - as_of > timedelta(days=STALE_DAYS)


def _up_to(as_of: date, ctx: Context) -> str:
    """ "up to 27 Nov 2026", or "newest paper 02 Aug 2026" when that is long ago."""
    if _stale(as_of, ctx):
        return f"newest paper {as_of:%d %b %Y}"
    return f"up to {as_of:%d %b %Y}"


def _heading(as_of: date, ctx: Context, m: Momentum, *, note: bool = False) -> str:
    """The first line: how far the figures reach, and over how many weeks (or, with
    `note`, why there are no rates yet)."""
    start = ("Momentum, " if _stale(as_of, ctx) else "Momentum ") + _up_to(as_of, ctx)
    if not m.compared:
        assert m.coverage is not None
        return f"{start} ({coverage_note(m.coverage)}):" if note else f"{start}:"
    return f"{start} ({m.known_weeks} weeks):"


def _nothing_indexed(m: Momentum) -> bool:
    return m.coverage is not None and m.coverage.since is None


NOTHING_INDEXED = (
    "paperwatch holds no papers from arXiv yet, so there is no momentum to show (the bundled "
    "sample papers never count).",
    "Papers arrive with the next arXiv announcement (or run: paperwatch ingest).",
)


async def momentum(cmd: Command, ctx: Context) -> Reply:
    """How much is written on a topic lately, or on each followed topic."""
    words = cmd.args.split()
    if words and words[0].lower() == "alerts":
        return await _alerts(cmd, ctx, words[1:])
    if cmd.args:
        return await _one_topic(cmd, ctx)
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = [s for s in await uow.subscriptions.for_chat(chat.id) if s.tag] if chat else []
        if not subs:
            return Reply.text(
                "You don't follow any topic yet.",
                f"/momentum <topic> shows any topic, e.g. /momentum {EXAMPLE_TOPIC}",
            )
        repo = uow.momentum
        as_of = await _as_of(repo, ctx)
        shown = subs[:SHOWN]
        figures = await repo.for_tags([s.tag for s in shown], as_of, WEEKS)
    first = figures[shown[0].tag]
    if _nothing_indexed(first):
        return Reply.text(*NOTHING_INDEXED)
    lines = [_heading(as_of, ctx, first, note=True)]
    for sub in shown:
        lines += _block(tag_name(ctx.catalog, sub.tag, (sub,)), figures[sub.tag], note=False)
    if len(subs) > SHOWN:
        lines.append(f"… and {len(subs) - SHOWN} more: /momentum <topic> shows any of them.")
    asked = [(s.tag, tag_name(ctx.catalog, s.tag, (s,))) for s in shown]
    return Reply(lines=tuple(lines), buttons=ask_rows(asked))


async def _one_topic(cmd: Command, ctx: Context) -> Reply:
    """A followed topic or query named by `cmd.args` (`handlers.lookup`), else any
    catalog topic."""
    resolution = resolve_topic(cmd.args, ctx.catalog)
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        own = find_subscription(cmd.args, subs, ctx.catalog)
        if own is not None and own.tag:
            tag, name = own.tag, tag_name(ctx.catalog, own.tag, (own,))
        elif resolution.topic is not None:
            tag, name = resolution.topic.slug, resolution.topic.name
        else:
            return unknown_topic(cmd.args, resolution.suggestions)
        repo = uow.momentum
        as_of = await _as_of(repo, ctx)
        m = await repo.for_tag(tag, as_of, WEEKS)
    if _nothing_indexed(m):
        return Reply.text(*NOTHING_INDEXED)
    lines = [_heading(as_of, ctx, m), *_block(name, m)]
    topic = resolution.topic
    if topic is not None and not resolution.exact and tag == topic.slug:
        lines.append(f'(I read "{cmd.args}" as {name}.)')
    return Reply(
        lines=tuple(lines),
        chart=tag if any(m.known_weekly) else None,
        buttons=ask_rows([(tag, name)]),
    )


async def _alerts(cmd: Command, ctx: Context, words: Sequence[str]) -> Reply:
    """`/momentum alerts` shows the switch; `on` / `off` sets it (who may: `_switches`)."""
    if not words:
        async with ctx.uow() as uow:
            chat = await uow.chats.get(cmd.chat)
        state = "on" if chat is None or chat.momentum_alerts else "off"
        return Reply.text(
            f"Momentum alerts are {state}: a message when a topic you follow suddenly rises.",
            "Change it with /momentum alerts on|off",
        )
    if len(words) != 1 or words[0].lower() not in _SWITCH:
        return usage_error(
            "/momentum alerts on|off", "Say on or off, nothing else. Nothing was changed."
        )
    enabled = _SWITCH[words[0].lower()]
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        await uow.chats.update(chat.id, momentum_alerts=enabled)
        await uow.commit()
    text = (
        "Momentum alerts are on: I'll tell you when a topic you follow suddenly rises."
        if enabled
        else "Momentum alerts are off. /momentum still shows the figures."
    )
    return Reply(lines=(text,), changes_chat=True)


def _rank(verdict: SpikeVerdict) -> tuple[float, float]:
    growth = verdict.growth if verdict.growth is not None else -math.inf
    return (growth, verdict.z)


async def trending(cmd: Command, ctx: Context) -> Reply:
    """Catalog topics whose rise over the last four weeks is real (the spike rule), fastest
    first; none before the index covers the weeks compared."""
    slugs = [t.slug for t in ctx.catalog.topics]
    async with ctx.uow() as uow:
        repo = uow.momentum
        as_of = await _as_of(repo, ctx)
        figures = await repo.for_tags(slugs, as_of, WEEKS)
    held = next(iter(figures.values()), None)
    if held is not None and not held.compared:
        assert held.coverage is not None
        if held.coverage.since is None:
            return Reply.text(*NOTHING_INDEXED)
        return Reply.text(
            f"No topic can be called rising yet: {coverage_note(held.coverage)}.",
            "/momentum <topic> shows what is known of any topic.",
        )
    verdicts = {slug: is_spike(m) for slug, m in figures.items()}
    rising = sorted((s for s, v in verdicts.items() if v), key=lambda s: _rank(verdicts[s]))
    top = rising[::-1][:TRENDING_SHOWN]
    if not top:
        return Reply.text(
            f"No topic is rising unusually fast right now ({_up_to(as_of, ctx)}).",
            "/momentum <topic> shows any topic's figures.",
        )
    lines = [f"Rising fastest, {_up_to(as_of, ctx)}:"]
    topics: list[Topic] = [t for s in top if (t := ctx.catalog.by_slug(s))]
    for topic in topics:
        m = figures[topic.slug]
        lines.append(f"• {topic.name}: {sentence(m)} {sparkline(m.known_weekly[-12:])}")
    return Reply(
        lines=tuple(lines),
        buttons=tuple((Button(f"Follow {t.name}", Action.FOLLOW, t.slug),) for t in topics),
    )


async def momentum_chart(ctx: Context, tag: str) -> bytes | None:
    """The PNG chart of a topic (a catalog slug or name, or a followed query's tag), of
    the weeks the index covers; None when unknown or empty. Rendering runs in a worker
    thread, off the event loop.
    """
    found = ctx.catalog.by_slug(tag) or resolve_topic(tag, ctx.catalog).topic
    name = found.name if found else tag
    key = found.slug if found else tag
    async with ctx.uow() as uow:
        repo = uow.momentum
        m = await repo.for_tag(key, await _as_of(repo, ctx), WEEKS)
    if not any(m.known_weekly):
        return None
    return await asyncio.to_thread(momentum_png, m, name)


def _switches(args: str) -> bool:
    """Only `/momentum alerts on|off` changes the chat; figures and the switch's state
    are open to everyone."""
    words = args.lower().split()
    return len(words) == 2 and words[0] == "alerts" and words[1] in _SWITCH


MOMENTUM = CommandSpec(
    "momentum",
    momentum,
    "how much is written on a topic lately; momentum alerts on or off",
    "/momentum [topic | alerts on|off]",
    changes=_switches,
    max_args=QUERY_ONLY_ARGS,
)
TRENDING = CommandSpec(
    "trending", trending, "topics rising fastest over the last four weeks", "/trending", max_args=0
)
