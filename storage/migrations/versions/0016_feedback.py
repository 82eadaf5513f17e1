"""👍/👎 feedback: a chat's votes on the papers it was sent, its learned model, and the
per-chat switch of the learned filter for instant alerts (`bot.topics.learned`).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("learned_filter", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "votes",
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.Integer(), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.Column("voted_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("value IN (-1, 1)", name=op.f("ck_votes_up_or_down")),
        sa.ForeignKeyConstraint(
            ["chat_id"], ["chats.id"], name=op.f("fk_votes_chat_id_chats"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name=op.f("fk_votes_paper_id_papers"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("chat_id", "paper_id", name=op.f("pk_votes")),
    )
    # A chat's newest vote in one seek: what the worker asks of every chat each round.
    op.create_index("ix_votes_chat_id_voted_at", "votes", ["chat_id", "voted_at"])
    op.create_table(
        "chat_models",
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.Text(), nullable=True),
        sa.Column("trained_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_vote_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("up", sa.Integer(), nullable=False),
        sa.Column("down", sa.Integer(), nullable=False),
        sa.Column("taught", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name=op.f("fk_chat_models_chat_id_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chat_id", name=op.f("pk_chat_models")),
    )


def downgrade() -> None:
    op.drop_table("chat_models")
    op.drop_index("ix_votes_chat_id_voted_at", table_name="votes")
    op.drop_table("votes")
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.drop_column("learned_filter")
