"""Initial schema: chats, subscriptions, mutes, papers, tags, outbox, poll state.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("external_id", sa.BigInteger(), nullable=True),
        sa.Column("external_key", sa.String(length=64), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("digest_mode", sa.String(length=16), nullable=False),
        sa.Column("digest_time", sa.String(length=5), nullable=False),
        sa.Column("digest_weekday", sa.Integer(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "(external_id IS NULL) <> (external_key IS NULL)",
            name=op.f("ck_chats_one_external_identity"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chats")),
        sa.UniqueConstraint("platform", "external_id", name="platform_external_id"),
        sa.UniqueConstraint("platform", "external_key", name="platform_external_key"),
    )
    op.create_table(
        "papers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("arxiv_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("abstract", sa.Text(), nullable=False),
        sa.Column("authors", sa.JSON(), nullable=False),
        sa.Column("categories", sa.JSON(), nullable=False),
        sa.Column("primary_category", sa.String(length=32), nullable=True),
        sa.Column("announced", sa.Date(), nullable=True),
        sa.Column("submitted", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=True),
        sa.Column("doi", sa.String(length=255), nullable=True),
        sa.Column("journal_ref", sa.Text(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("ingested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_papers")),
        sa.UniqueConstraint("arxiv_id", name=op.f("uq_papers_arxiv_id")),
    )
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_papers_announced"), ["announced"], unique=False)
        batch_op.create_index(batch_op.f("ix_papers_ingested_at"), ["ingested_at"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_papers_primary_category"), ["primary_category"], unique=False
        )

    op.create_table(
        "poll_state",
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("watermark", sa.String(length=255), nullable=True),
        sa.Column("etag", sa.String(length=255), nullable=True),
        sa.Column("last_modified", sa.String(length=64), nullable=True),
        sa.Column("last_announced", sa.Date(), nullable=True),
        sa.Column("last_count", sa.Integer(), nullable=False),
        sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("source", name=op.f("pk_poll_state")),
    )
    op.create_table(
        "muted_tags",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=128), nullable=False),
        sa.Column("scope", sa.String(length=1000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_id"], ["chats.id"], name=op.f("fk_muted_tags_chat_id_chats"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_muted_tags")),
        sa.UniqueConstraint("chat_id", "tag", "scope", name="chat_tag_scope"),
    )
    with op.batch_alter_table("muted_tags", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_muted_tags_chat_id"), ["chat_id"], unique=False)

    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["chat_id"], ["chats.id"], name=op.f("fk_outbox_chat_id_chats"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name=op.f("fk_outbox_paper_id_papers"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint("chat_id", "paper_id", "kind", name="chat_paper_kind"),
    )
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.create_index("ix_outbox_status_due", ["status", "due_at"], unique=False)

    op.create_table(
        "paper_tags",
        sa.Column("paper_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=128), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("why", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["paper_id"],
            ["papers.id"],
            name=op.f("fk_paper_tags_paper_id_papers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paper_id", "tag", name=op.f("pk_paper_tags")),
    )
    with op.batch_alter_table("paper_tags", schema=None) as batch_op:
        batch_op.create_index("ix_paper_tags_tag_paper", ["tag", "paper_id"], unique=False)

    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("target", sa.String(length=1000), nullable=False),
        sa.Column("label", sa.String(length=1000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name=op.f("fk_subscriptions_chat_id_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscriptions")),
        sa.UniqueConstraint("chat_id", "kind", "target", name="chat_kind_target"),
    )
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_subscriptions_chat_id"), ["chat_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_subscriptions_chat_id"))

    op.drop_table("subscriptions")
    with op.batch_alter_table("paper_tags", schema=None) as batch_op:
        batch_op.drop_index("ix_paper_tags_tag_paper")

    op.drop_table("paper_tags")
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_status_due")

    op.drop_table("outbox")
    with op.batch_alter_table("muted_tags", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_muted_tags_chat_id"))

    op.drop_table("muted_tags")
    op.drop_table("poll_state")
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_papers_primary_category"))
        batch_op.drop_index(batch_op.f("ix_papers_ingested_at"))
        batch_op.drop_index(batch_op.f("ix_papers_announced"))

    op.drop_table("papers")
    op.drop_table("chats")
