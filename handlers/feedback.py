"""👍/👎 feedback: /more, /less (and their buttons), /feedback [reset], /filter learned on|off.

A vote is a chat's opinion of a paper it was sent (an alert or a digest: the outbox's records
say so); anyone in the chat may give one, as anyone may press a button under an alert. The
worker trains the chat's model from the votes (`bot.services.model_training`); the rules of
when it orders digests and may hold back alerts are `bot.topics.learned`'s. Resetting the
votes and switching the filter change the chat: administrators or owners only in groups.
"""

from __future__ import annotations

from datetime import datetime

from bot.domain import Command, DigestMode, Paper, Reply, Section, paper_key
from bot.topics.card import shorten, tag_name
from bot.topics.latex import display
from bot.topics.learned import DOWN, FILTER_BELOW, MIN_DOWN, MIN_UP, UP, ChatModel, topic_counts
from bot.topics.text_model import paper_vector
from handlers.base import CommandSpec, Context, with_args
from handlers.subscriptions import usage_error

NOT_SENT = (
    "{id} was not in an alert or a digest I sent this chat, and 👍/👎 are for those. "
    "Nothing was changed."
)
WHY_WORDS = 5
FILTER_RULE = (
    f"With it on, an instant alert is held back (not sent; /latest still lists it) when your "
    f"👍/👎 model gives it under {FILTER_BELOW:.0%} and every topic that brought it has at least "
    f"{MIN_UP} 👍 and {MIN_DOWN} 👎. A paper whose title names a topic you follow that it "
    "carries is always sent."
)


async def more(cmd: Command, ctx: Context) -> Reply:
    """👍: more papers like this one."""
    return await _vote(cmd, ctx, UP, MORE.usage)


async def less(cmd: Command, ctx: Context) -> Reply:
    """👎: fewer papers like this one."""
    return await _vote(cmd, ctx, DOWN, LESS.usage)


async def _vote(cmd: Command, ctx: Context, value: int, usage: str) -> Reply:
    try:
        arxiv_id = paper_key(cmd.args)
    except ValueError:
        return usage_error(
            usage, "Give me the arXiv id of a paper I sent here. Nothing was changed."
        )
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        paper = await uow.papers.get(arxiv_id)
        if chat is None or paper is None or not await uow.feedback.received(chat.id, arxiv_id):
            return Reply.text(NOT_SENT.format(id=arxiv_id), is_error=True)
        before = await uow.feedback.vote(chat.id, arxiv_id, value, ctx.clock())
        votes = await uow.feedback.votes(chat.id)
        followed = await uow.subscriptions.for_chat(chat.id)
        await uow.commit()
    mark = "👍" if value == UP else "👎"
    title = shorten(display(paper.title) or paper.shown_id, 80)
    if before == value:
        first = f"{mark} was already your vote on “{title}”."
    else:
        first = f"{mark} noted for “{title}”: {'more' if value == UP else 'fewer'} like this."
    counts = topic_counts(((v.value, v.paper.tags) for v in votes), {s.tag for s in followed})
    counted = [(t, c) for t, c in counts.items() if t in paper.tags]
    lines = [first]
    for tag, (up, down) in counted:
        lines.append(f"{tag_name(ctx.catalog, tag, followed)}: {_progress(up, down)}")
    return Reply(lines=tuple(lines))


def _progress(up: int, down: int) -> str:
    if up >= MIN_UP and down >= MIN_DOWN:
        return f"{up} 👍, {down} 👎: your digests here follow your votes."
    wanted = [
        f"{n} more {mark}" for n, mark in ((MIN_UP - up, "👍"), (MIN_DOWN - down, "👎")) if n > 0
    ]
    return f"{up} 👍, {down} 👎; " + " and ".join(wanted) + " before your votes order your digests."


async def feedback(cmd: Command, ctx: Context) -> Reply:
    """Your votes per topic and the model's state; `reset` forgets them."""
    words = cmd.args.lower().split()
    if words not in ([], ["reset"]):
        return usage_error(FEEDBACK.usage, f"I don't understand {cmd.args!r}. Nothing was changed.")
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        if words:
            gone = await uow.feedback.clear(chat.id) if chat else 0
            await uow.commit()
            if not gone:
                return Reply.text("This chat has no votes to forget. Nothing was changed.")
            return Reply(
                lines=(
                    f"Forgot this chat's {gone} vote(s) and its model; "
                    "digests keep the topics' own order.",
                ),
                changes_chat=True,
            )
        votes = await uow.feedback.votes(chat.id) if chat else []
        model = await uow.feedback.model(chat.id) if chat else None
        followed = await uow.subscriptions.for_chat(chat.id) if chat else []
    if not votes:
        return Reply.text(
            "No votes yet. Press 👍 or 👎 under an alert or a digest, or /more <id>, /less <id>.",
            f"Once a topic has {MIN_UP} 👍 and {MIN_DOWN} 👎, digests follow your votes there.",
        )
    up = sum(1 for v in votes if v.value == UP)
    counts = topic_counts(((v.value, v.paper.tags) for v in votes), {s.tag for s in followed})
    lines = [f"Your votes: {up} 👍, {len(votes) - up} 👎."]
    lines += [
        f"• {tag_name(ctx.catalog, t, followed)}: {_progress(u, d)}" for t, (u, d) in counts.items()
    ]
    lines.append(_state(model, max(v.at for v in votes), ctx))
    lines.append("/why <id> shows what the model weighs; /feedback reset forgets every vote.")
    return Reply(lines=tuple(lines))


def _state(model: ChatModel | None, newest: datetime, ctx: Context) -> str:
    if model is None:
        return "Model: not trained yet (the worker trains it within a minute of a vote)."
    when = model.trained_at.strftime("%Y-%m-%d %H:%M UTC")
    behind = " Newer votes join at the next training." if newest > model.last_vote_at else ""
    if model.model is None:
        return f"Model: none yet, no topic has enough votes (checked {when}).{behind}"
    names = ", ".join(tag_name(ctx.catalog, t) for t in model.taught)
    votes = model.up + model.down
    return f"Model: trained {when} on {votes} votes; it orders your digests in {names}.{behind}"


async def filter_(cmd: Command, ctx: Context) -> Reply:
    """Hold back instant alerts your 👍/👎 model rejects: /filter learned on|off."""
    words = cmd.args.lower().split()
    if words and words not in (["learned", "on"], ["learned", "off"]):
        return usage_error(FILTER.usage, f"I don't understand {cmd.args!r}. Nothing was changed.")
    async with ctx.uow() as uow:
        if words:
            chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
            await uow.chats.update(chat.id, learned_filter=words[1] == "on")
            await uow.commit()
        chat = await uow.chats.get(cmd.chat)  # looking registers nothing
    state = "on" if chat is not None and chat.learned_filter else "off"
    lines = [f"The learned filter is {state} in this chat.", FILTER_RULE]
    if chat is None or chat.digest_mode is not DigestMode.INSTANT:
        lines.append(
            "This chat gets digests, which your votes order; the filter acts on instant alerts."
        )
    if not words:
        lines.append(f"Change it with {FILTER.usage}.")
    return Reply(lines=tuple(lines), changes_chat=bool(words))


MORE = CommandSpec(
    "more", more, "👍 a paper I sent: more like it", "/more <arXiv id>", max_args=200
)
LESS = CommandSpec(
    "less", less, "👎 a paper I sent: fewer like it", "/less <arXiv id>", max_args=200
)
FEEDBACK = CommandSpec(
    "feedback",
    feedback,
    "your 👍/👎 per topic and what they taught; reset forgets them",
    "/feedback [reset]",
    changes=lambda args: args.strip().lower() == "reset",
)
FILTER = CommandSpec(
    "filter",
    filter_,
    "hold back instant alerts your 👍/👎 reject",
    "/filter learned on|off",
    changes=with_args,
)


def why_section(model: ChatModel | None, paper: Paper, ctx: Context) -> Section | None:
    """What the chat's 👍/👎 model weighs in `paper` (for /why): the words that weighed most
    for and against it, and its estimate."""
    linear = model.linear() if model is not None else None
    if model is None or linear is None:
        return None
    vector = paper_vector(paper)
    up, down = linear.explain(vector, top=WHY_WORDS)
    names = ", ".join(tag_name(ctx.catalog, t) for t in model.taught)
    return Section(
        "What your 👍/👎 taught me:",
        lines=(
            "For: " + (", ".join(c.feature for c in up) or "nothing"),
            "Against: " + (", ".join(c.feature for c in down) or "nothing"),
            f"{linear.probability(vector):.0%} likely a 👍 (the model orders {names}).",
        ),
    )
