"""SQLAlchemy 2 table models. Only `storage` sees these; callers get domain objects.

Every schema change goes through an Alembic migration in `storage/migrations`.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware timestamps on every backend.

    PostgreSQL keeps `timestamptz`; SQLite has no time zones, so values are stored
    as naive UTC and come back aware. Naive input is refused: it is always a bug.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSON, list[Any]: JSON}  # noqa: RUF012


class ChatRow(Base):
    """A conversation on a platform. Telegram ids are 64-bit integers; Slack ids are text."""

    __tablename__ = "chats"
    __table_args__ = (
        UniqueConstraint("platform", "external_id", name="platform_external_id"),
        UniqueConstraint("platform", "external_key", name="platform_external_key"),
        CheckConstraint(
            "(external_id IS NULL) <> (external_key IS NULL)", name="one_external_identity"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    external_id: Mapped[int | None] = mapped_column(BigInteger)
    external_key: Mapped[str | None] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16), default="private")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    digest_mode: Mapped[str] = mapped_column(String(16), default="daily")
    digest_time: Mapped[str] = mapped_column(String(5), default="08:00")
    digest_weekday: Mapped[int] = mapped_column(Integer, default=0)
    paused: Mapped[bool] = mapped_column(default=False)
    active: Mapped[bool] = mapped_column(default=True)
    quiet_start: Mapped[str | None] = mapped_column(String(5))  # HH:MM local, instant alerts wait
    quiet_end: Mapped[str | None] = mapped_column(String(5))
    momentum_alerts: Mapped[bool] = mapped_column(default=True)
    # A digest with nothing new sends a one-line note instead of nothing.
    empty_digest_note: Mapped[bool] = mapped_column(default=False)
    # /filter learned on: instant alerts the chat's 👍/👎 model rejects are held back (0016).
    learned_filter: Mapped[bool] = mapped_column(default=False, server_default=false())
    # When this chat's next digest is due (UTC); NULL when it gets no digests.
    next_digest_at: Mapped[datetime | None] = mapped_column(index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class SubscriptionRow(Base):
    __tablename__ = "subscriptions"
    __table_args__ = (
        UniqueConstraint("chat_id", "kind", "target", name="chat_kind_target"),
        # Fan-out reads a tag's followers from the index alone (migration 0004).
        Index("ix_subscriptions_tag_chat", "tag", "chat_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # "topic" | "query" | "author"
    target: Mapped[str] = mapped_column(String(1000))  # topic slug or query text
    tag: Mapped[str] = mapped_column(String(128), index=True)  # the paper tag it follows
    label: Mapped[str] = mapped_column(String(1000))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class MutedTagRow(Base):
    """A tag a chat does not want to see; `scope` limits it to one subscription."""

    __tablename__ = "muted_tags"
    __table_args__ = (UniqueConstraint("chat_id", "tag", "scope", name="chat_tag_scope"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"), index=True)
    tag: Mapped[str] = mapped_column(String(128))
    scope: Mapped[str] = mapped_column(String(1000), default="")  # "" = every subscription
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class BatchRow(Base):
    """The new papers of one ingest, fanned out to the chats together.

    A paper joins at most one batch (`papers.batch_id`), and a chat gets at most one
    outbox row per batch, so a paper can reach a chat only once.
    """

    __tablename__ = "batches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    papers: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PaperRow(Base):
    __tablename__ = "papers"
    # Every tag's momentum counts only real papers by day: read from this index alone (0010).
    __table_args__ = (Index("ix_papers_sample_announced", "sample", "announced"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    arxiv_id: Mapped[str] = mapped_column(String(64), unique=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    title: Mapped[str] = mapped_column(Text)
    abstract: Mapped[str] = mapped_column(Text, default="")
    authors: Mapped[list[Any]] = mapped_column(default=list)  # [{"name":..., "affiliations":[...]}]
    categories: Mapped[list[Any]] = mapped_column(default=list)  # primary first
    primary_category: Mapped[str | None] = mapped_column(String(32), index=True)
    announced: Mapped[date | None] = mapped_column(Date, index=True)
    submitted: Mapped[datetime | None] = mapped_column()
    updated: Mapped[datetime | None] = mapped_column()
    doi: Mapped[str | None] = mapped_column(String(255))
    journal_ref: Mapped[str | None] = mapped_column(Text)
    comment: Mapped[str | None] = mapped_column(Text)
    ingested_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    batch_id: Mapped[int | None] = mapped_column(
        ForeignKey("batches.id", ondelete="SET NULL"), index=True
    )
    # A bundled sample paper (`bot.services.ingest.load_sample_if_empty`): shown, never
    # counted in momentum, shares or spikes. A real announcement of it clears the flag.
    sample: Mapped[bool] = mapped_column(default=False, server_default=false())


class AnnouncedDayRow(Base):
    """How many counted papers (announced that day, not a sample) the index holds of each
    announcement day: momentum's coverage and share read these few rows, not the papers.
    Kept by `storage.announced_days` in the transaction that stores the papers (0011)."""

    __tablename__ = "announced_days"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    papers: Mapped[int] = mapped_column(Integer, default=0)


class TagDayRow(Base):
    """How many counted papers (announced that day, not a sample) of each tag the index
    holds of each announcement day: momentum's weekly counts read these rows, not the
    tags of every paper. Kept by `storage.tag_days` in the transaction that changes the
    tags or the papers (0012)."""

    __tablename__ = "tag_days"
    # Every tag's counts over some weeks read a stretch of days.
    __table_args__ = (Index("ix_tag_days_day", "day"),)

    tag: Mapped[str] = mapped_column(String(128), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    papers: Mapped[int] = mapped_column(Integer, default=0)


class PaperTagRow(Base):
    """A topic on a paper: a catalog slug (or custom-query key) and why it matched."""

    __tablename__ = "paper_tags"
    __table_args__ = (Index("ix_paper_tags_tag_paper", "tag", "paper_id"),)

    paper_id: Mapped[int] = mapped_column(
        ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True
    )
    tag: Mapped[str] = mapped_column(String(128), primary_key=True)
    source: Mapped[str] = mapped_column(String(16), default="rule")  # "rule" | "curated"
    why: Mapped[list[Any]] = mapped_column(default=list)


class OutboxRow(Base):
    """Messages owed to a chat, written in the transaction that caused them.

    kind (`bot.domain.OutboxKind`) "alert": the papers of one batch (`batch_id`) that
    reach the chat, one message each, sent as soon as due. kind "item": the same,
    waiting for the chat's digest; the digest tick folds a chat's items into one
    "digest" row. kinds "spike" and "note": notices (a topic heating up; an empty
    digest).

    `payload` says what to send and how far sending got, one type per kind
    (`bot.outbox_payloads`), kept as JSON by `storage.outbox_json` alone. Status
    (`bot.domain.OutboxStatus`) moves pending -> sending (claimed; `due_at` is then the
    end of the claim) -> pending (more to send) | sent | dead; "folded" items live on
    inside their digest. A row dies on a permanent error, or once its failures have
    lasted the give-up budget counted from `failing_since`.
    """

    __tablename__ = "outbox"
    __table_args__ = (
        UniqueConstraint("chat_id", "batch_id", name="chat_batch"),
        Index("ix_outbox_status_due", "status", "due_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    batch_id: Mapped[int | None] = mapped_column(ForeignKey("batches.id", ondelete="CASCADE"))
    # OutboxKind: "item" | "alert" | "digest" | "spike" | "note"
    kind: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # OutboxStatus: "pending" | "sending" | "sent" | "dead" | "folded"
    status: Mapped[str] = mapped_column(String(16), default="pending")
    due_at: Mapped[datetime] = mapped_column(default=utcnow)
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # failures in a row
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column()
    # The first failure of the current run of failures (NULL after a success).
    failing_since: Mapped[datetime | None] = mapped_column()
    # The process (`processes.id`) holding the claim while status is "sending".
    claimed_by: Mapped[str | None] = mapped_column(String(32))


class PollStateRow(Base):
    """Where each arXiv source got to. Advanced only with the papers it stored."""

    __tablename__ = "poll_state"

    source: Mapped[str] = mapped_column(String(255), primary_key=True)
    watermark: Mapped[str | None] = mapped_column(String(255))
    etag: Mapped[str | None] = mapped_column(String(255))
    last_modified: Mapped[str | None] = mapped_column(String(64))
    last_announced: Mapped[date | None] = mapped_column(Date)
    last_count: Mapped[int] = mapped_column(Integer, default=0)
    last_success_at: Mapped[datetime | None] = mapped_column()
    last_attempt_at: Mapped[datetime | None] = mapped_column()
    last_error: Mapped[str | None] = mapped_column(Text)


class MomentumAlertRow(Base):
    """Spike alert state per chat and topic tag: armed again once the topic calms."""

    __tablename__ = "momentum_alerts"

    chat_id: Mapped[int] = mapped_column(
        ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True
    )
    tag: Mapped[str] = mapped_column(String(128), primary_key=True)
    last_alert_at: Mapped[datetime | None] = mapped_column()
    armed: Mapped[bool] = mapped_column(default=True)


class ProcessRow(Base):
    """A running `paperwatch run` process, seen alive at `seen_at` (bot.services.peers)."""

    __tablename__ = "processes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    role: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column()
    seen_at: Mapped[datetime] = mapped_column()


class LlmBudgetRow(Base):
    """Tokens spent on /ask's language model per UTC day, reserved before each call and
    settled after (`storage.llm_budget`), shared by every process on the database."""

    __tablename__ = "llm_budget"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    tokens: Mapped[int] = mapped_column(Integer, default=0)


# The tables of personal relevance live in their own module; importing it here registers
# them on `Base.metadata` wherever the models are loaded (Alembic, the schema tests).
import storage.models_personal  # noqa: E402, F401
