"""The next step of a claimed outbox row: the message to send, or the progress to record.

Pure: the row's typed payload says what it owes and how far sending got, and the
step carries the payload as it will be once the message is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date

from bot.domain import Chat, DigestMode, Paper, Reply
from bot.outbox_payloads import (
    AlertPayload,
    DigestPayload,
    NoticePayload,
    OutboxItem,
    OutboxKind,
    OutboxPayload,
    Progress,
)
from bot.topics.catalog import Catalog
from bot.topics.content import Audience, alert, digest, held_back
from bot.topics.learned import ChatModel


@dataclass(frozen=True, slots=True)
class Job:
    """The next message of a claimed row, and the row's payload once it is sent (and,
    for an alert, the paper's listing date, from which its delay is measured).

    `part` None sends every part `reply` renders to (one alert); a number sends only
    that part (of a digest or notice), and the row is done after its last part.
    """

    item: OutboxItem
    chat: Chat
    reply: Reply
    part: int | None
    payload: OutboxPayload
    last: bool
    announced: date | None = None  # an alert's listing date (its delay is measured)


def papers_wanted(item: OutboxItem) -> list[int]:
    """The papers a claim of `item` needs: the next alert's, or all of a digest's."""
    match item.payload:
        case AlertPayload(papers=papers, sent=done):
            return list(papers[done : done + 1])
        case DigestPayload(papers=papers):
            return list(papers)
    return []


def learns(item: OutboxItem, chats: Mapping[int, Chat]) -> bool:
    """Does the chat's learned model shape this row (a digest, or a filtered alert)?"""
    return item.kind is OutboxKind.DIGEST or (
        item.kind is OutboxKind.ALERT and chats[item.chat_id].learned_filter
    )


def unresolved_payload(item: OutboxItem) -> AlertPayload | DigestPayload | None:
    """The payload of a row whose batches are still to be resolved into papers."""
    payload = item.payload
    if isinstance(payload, AlertPayload | DigestPayload) and payload.batches is not None:
        return payload
    return None


def next_step(
    catalog: Catalog,
    item: OutboxItem,
    chat: Chat,
    audience: Audience,
    papers: Mapping[int, Paper],
    momentum: dict[str, str],
    model: ChatModel | None = None,
) -> Job | Progress:
    """The row's next message, or its progress when there is nothing to send. The chat's
    learned `model` orders its digests, and holds back alerts when the chat filters by it."""
    payload = item.payload
    if isinstance(payload, AlertPayload):
        ids, done = payload.papers, payload.sent
        if done >= len(ids):
            return Progress(item.id, payload, done=True)
        after = replace(payload, sent=done + 1)
        last = done + 1 >= len(ids)
        paper = papers.get(ids[done])
        reply = alert(catalog, paper, audience) if paper else None
        if paper and chat.learned_filter and held_back(catalog, paper, audience, model):
            reply = None
        if reply is None:  # muted or unfollowed since, or held back: skip it
            return Progress(item.id, after, done=last)
        return Job(item, chat, reply, None, after, last, paper.announced if paper else None)
    if isinstance(payload, DigestPayload):
        weekly = chat.digest_mode == DigestMode.WEEKLY
        title = "Your weekly digest" if weekly else "Your daily digest"
        found = [papers[i] for i in payload.papers if i in papers]
        reply = digest(catalog, found, audience, title, momentum, model)
    elif isinstance(payload, NoticePayload):
        reply = Reply.text(payload.text) if payload.text else None
    else:  # an item waits for its digest: never claimed
        return Progress(item.id, payload, done=True)
    if reply is None:
        return Progress(item.id, payload, done=True)
    part = payload.parts_sent
    return Job(item, chat, reply, part, replace(payload, parts_sent=part + 1), False)
