"""Delivery: subscription tags, digest schedule, quiet hours, momentum alert switch.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tag", sa.String(length=128), nullable=True))
    # Existing topic subscriptions follow their slug; queries get their tag on first use.
    op.execute("UPDATE subscriptions SET tag = target WHERE kind = 'topic'")
    op.execute("UPDATE subscriptions SET tag = '' WHERE tag IS NULL")
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.alter_column("tag", existing_type=sa.String(length=128), nullable=False)
        batch_op.create_index(batch_op.f("ix_subscriptions_tag"), ["tag"], unique=False)

    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("quiet_start", sa.String(length=5), nullable=True))
        batch_op.add_column(sa.Column("quiet_end", sa.String(length=5), nullable=True))
        batch_op.add_column(
            sa.Column("momentum_alerts", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        batch_op.add_column(sa.Column("next_digest_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_chats_next_digest_at"), ["next_digest_at"])


def downgrade() -> None:
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chats_next_digest_at"))
        batch_op.drop_column("next_digest_at")
        batch_op.drop_column("momentum_alerts")
        batch_op.drop_column("quiet_end")
        batch_op.drop_column("quiet_start")
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_subscriptions_tag"))
        batch_op.drop_column("tag")
