"""The time of the last request to arXiv, kept where every process finds it.

arXiv asks for one request every few seconds from a robot, not from each of its
processes: a process restarted a second after the last request, or a `paperwatch
ingest` run beside the bot, must wait its turn. The time lives in `poll_state`, under
the reserved source `arxiv:requests` (its `last_attempt_at`; no other field is used),
so no schema change is needed. `/status` lists only `rss:` sources and never shows it.

This is `bot.arxiv.spacing.RequestStamp` over the database. A database fault never
stops a request: it is logged, and the spacing falls back to the process's own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError

from bot.domain import PollState
from storage.uow import UnitOfWork

log = logging.getLogger(__name__)

REQUESTS_SOURCE = "arxiv:requests"


class DatabaseRequestStamp:
    """Reads and writes the shared last-request time (aware UTC) in its own transactions."""

    def __init__(self, uow_factory: Callable[[], UnitOfWork]) -> None:
        self._uow = uow_factory

    async def last(self) -> datetime | None:
        try:
            async with self._uow() as uow:
                state = await uow.poll_state.get(REQUESTS_SOURCE)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("cannot read the last arXiv request time: %s", exc)
            return None
        return state.last_attempt_at if state else None

    async def record(self, at: datetime) -> None:
        try:
            async with self._uow() as uow:
                state = await uow.poll_state.get(REQUESTS_SOURCE)
                base = state or PollState(source=REQUESTS_SOURCE)
                await uow.poll_state.save(replace(base, last_attempt_at=at))
                await uow.commit()
        except (SQLAlchemyError, OSError) as exc:
            log.warning("cannot record the last arXiv request time: %s", exc)
