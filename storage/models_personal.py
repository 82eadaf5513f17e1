"""The tables of personal relevance (issue 20): "papers like these" sets, 👍/👎 votes and
chats' learned models. Kept apart from `storage.models`, which imports this module so that
the tables are on `Base.metadata`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.models import Base, utcnow


class LikeSetRow(Base):
    """A "papers like these" set (`bot.topics.like`): its arXiv ids, its stored profile (the
    pruned centroid and members, JSON) and its calibrated threshold, by the set's paper tag,
    which the LIKE subscriptions to it carry (one row however many chats follow the set)."""

    __tablename__ = "like_sets"

    tag: Mapped[str] = mapped_column(String(128), primary_key=True)
    arxiv_ids: Mapped[str] = mapped_column(Text)  # JSON list, in the order given
    profile: Mapped[str] = mapped_column(Text)  # `LikeProfile.to_json`
    threshold: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # when the threshold was last calibrated and on how many stored papers (0: the bundled
    # day), so the worker knows which sets to recalibrate (0018)
    calibrated_at: Mapped[datetime | None] = mapped_column(default=None)
    calibrated_on: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class VoteRow(Base):
    """A chat's 👍 (+1) or 👎 (-1) on a paper it was sent; a new vote replaces it (0016)."""

    __tablename__ = "votes"
    __table_args__ = (
        CheckConstraint("value IN (-1, 1)", name="up_or_down"),
        # a chat's newest vote in one seek (`FeedbackRepository.stale`)
        Index("ix_votes_chat_id_voted_at", "chat_id", "voted_at"),
    )

    chat_id: Mapped[int] = mapped_column(
        ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True
    )
    paper_id: Mapped[int] = mapped_column(
        ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True
    )
    value: Mapped[int] = mapped_column(Integer)
    voted_at: Mapped[datetime] = mapped_column()


class ChatModelRow(Base):
    """A chat's learned model (`bot.topics.learned`): its JSON (NULL while no topic has
    enough votes), when it was trained, the newest vote it saw, its counts (0016)."""

    __tablename__ = "chat_models"

    chat_id: Mapped[int] = mapped_column(
        ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str | None] = mapped_column(Text)
    trained_at: Mapped[datetime] = mapped_column()
    last_vote_at: Mapped[datetime] = mapped_column()
    up: Mapped[int] = mapped_column(Integer, default=0)
    down: Mapped[int] = mapped_column(Integer, default=0)
    taught: Mapped[list[Any]] = mapped_column(default=list)  # the tags it orders
