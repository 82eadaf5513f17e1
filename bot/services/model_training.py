"""Training chats' 👍/👎 models in the worker (`bot.topics.learned` has the rules).

A vote only marks its chat's model stale (a vote newer than the model's `last_vote_at`); each
delivery round (`bot.services.deliver.Deliverer.drain`, every few seconds) first retrains the
stale models of its share of the chats, so a burst of votes costs one training, and the
digests it then sends are ordered by the newest model. The fit runs in a thread, off the
event loop; a chat whose training fails is logged and tried again next round.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime

from bot.ports import UnitOfWork
from bot.topics.learned import build

log = logging.getLogger(__name__)

#: Chats retrained per delivery round at most (each takes milliseconds).
PER_ROUND = 50


async def train_stale(
    uow_factory: Callable[[], UnitOfWork],
    clock: Callable[[], datetime],
    *,
    share: tuple[int, int] = (0, 1),
    limit: int = PER_ROUND,
) -> int:
    """Retrain the models of the chats (of `share`) that voted since; how many were trained."""
    try:
        async with uow_factory() as uow:
            stale = await uow.feedback.stale(limit, share)
    except Exception:
        log.exception("could not look for stale models; tried again next round")
        return 0
    trained = 0
    for chat_id in stale:
        try:
            await train_chat(uow_factory, clock, chat_id)
            trained += 1
        except Exception:
            log.exception("model training failed chat=%s; tried again next round", chat_id)
    return trained


async def train_chat(
    uow_factory: Callable[[], UnitOfWork], clock: Callable[[], datetime], chat_id: int
) -> None:
    """Train one chat's model from its votes now (a thread does the fitting) and store it."""
    async with uow_factory() as uow:
        votes = await uow.feedback.votes(chat_id)
        followed = {s.tag for s in await uow.subscriptions.for_chat(chat_id)}
    if not votes:
        return
    model = await asyncio.to_thread(build, votes, followed, clock())
    async with uow_factory() as uow:
        await uow.feedback.save_model(chat_id, model)
        await uow.commit()
    log.info(
        "model trained chat=%s up=%d down=%d taught=%s",
        chat_id,
        model.up,
        model.down,
        ",".join(model.taught) or "-",
    )
