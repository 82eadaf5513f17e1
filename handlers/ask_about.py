"""The "Ask about <topic>" button, the same on every platform that has buttons.

Pressing it asks nothing yet: the adapter asks the person for their question (Telegram a
reply to a prompt, Slack a form), using `topic_name` for what to call the topic and
`prompt_text` for the words; the question that comes back runs as
`/ask <tag>: <question>` (`ask_command`), the command anyone could type, so the answer
is the one /ask gives. The tag comes from the signed button (or, on Telegram, from the
prompt the bot itself sent), never from text a person typed.
"""

from __future__ import annotations

from bot.domain import ChatKind, ChatRef, Command, Reply, Role
from bot.topics.card import shorten
from bot.topics.resolve import resolve_topic
from handlers.ask import ASK
from handlers.base import Context
from handlers.lookup import find_subscription
from handlers.subscriptions import subscription_tag, unknown_topic

NAME_CHARS = 80  # of a followed query's text, in a prompt
PLACEHOLDER = "Your question, e.g. which rewards do web agents use?"
GONE = (
    "This chat no longer follows that query, so I can't ask it; "
    "/ask <topic>: <question> asks any topic."
)


async def topic_name(chat: ChatRef, tag: str, ctx: Context) -> str | None:
    """What the chat calls `tag`: a catalog topic's name, or the text of a query the chat
    follows; None when it is neither (a query unfollowed since the button was sent)."""
    topic = ctx.catalog.by_slug(tag)
    if topic is not None:
        return topic.name
    async with ctx.uow() as uow:
        found = await uow.chats.get(chat)
        subs = await uow.subscriptions.for_chat(found.id) if found else []
    own = next((sub for sub in subs if sub.tag == tag), None)
    return shorten(own.label, NAME_CHARS) if own is not None else None


async def named_topic(chat: ChatRef, name: str, ctx: Context) -> str | Reply:
    """The tag of the topic `name` names (a followed query or topic of `chat`, else a catalog
    topic, as /ask reads the words before its colon), or the answer to an unknown one: for
    callers that are told the topic apart from the question (`paperwatch ask --topic`)."""
    async with ctx.uow() as uow:
        found = await uow.chats.get(chat)
        subs = await uow.subscriptions.for_chat(found.id) if found else []
    own = find_subscription(name, subs, ctx.catalog)
    if own is not None:
        return subscription_tag(own)
    resolution = resolve_topic(name, ctx.catalog)
    if resolution.topic is not None:
        return resolution.topic.slug
    return unknown_topic(name.strip(), resolution.suggestions)


def prompt_text(name: str) -> str:
    """The words that ask for the question: "Ask about RL for LLM Agents:"."""
    return f"Ask about {name}:"


def ask_command(
    tag: str,
    question: str,
    *,
    chat: ChatRef,
    chat_kind: ChatKind = ChatKind.PRIVATE,
    user_id: str | None = None,
) -> Command:
    """`/ask <tag>: <question>`, as if typed in `chat`. A question is read-only, so it
    needs no role; its lines become one (a form's multiline field), and an empty one gets
    /ask's "ask about something specific"."""
    words = " ".join(question.split()) or "?"
    return Command(
        name=ASK.name,
        args=f"{tag}: {words}",
        chat=chat,
        chat_kind=chat_kind,
        user_id=user_id,
        role=Role.MEMBER,
    )
