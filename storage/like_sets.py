"""The "papers like these" sets (`bot.ports.LikeSetStore`), table `like_sets`."""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import SubscriptionKind
from bot.ports import LikeSet
from storage.models import ChatRow, SubscriptionRow
from storage.models_personal import LikeSetRow


def _like_set(row: LikeSetRow) -> LikeSet:
    return LikeSet(
        row.tag,
        tuple(json.loads(row.arxiv_ids)),
        row.profile,
        row.threshold,
        row.calibrated_at,
        row.calibrated_on,
    )


class LikeSetRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def save(self, like_set: LikeSet) -> None:
        await self._s.merge(
            LikeSetRow(
                tag=like_set.tag,
                arxiv_ids=json.dumps(list(like_set.arxiv_ids)),
                profile=like_set.profile,
                threshold=like_set.threshold,
                calibrated_at=like_set.calibrated_at,
                calibrated_on=like_set.calibrated_on,
            )
        )
        await self._s.flush()

    async def get(self, tag: str) -> LikeSet | None:
        row = await self._s.get(LikeSetRow, tag)
        return _like_set(row) if row is not None else None

    async def followed(self) -> list[LikeSet]:
        followed = (
            select(SubscriptionRow.tag)
            .join(ChatRow, ChatRow.id == SubscriptionRow.chat_id)
            .where(SubscriptionRow.kind == SubscriptionKind.LIKE.value, ChatRow.active)
        )
        rows = await self._s.scalars(
            select(LikeSetRow).where(LikeSetRow.tag.in_(followed)).order_by(LikeSetRow.tag)
        )
        return [_like_set(row) for row in rows]

    async def recalibrated(self, tag: str, threshold: float, at: datetime, on: int) -> None:
        await self._s.execute(
            update(LikeSetRow)
            .where(LikeSetRow.tag == tag)
            .values(threshold=threshold, calibrated_at=at, calibrated_on=on)
        )
