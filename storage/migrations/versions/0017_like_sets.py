"""The "papers like these" sets: each set's arXiv ids, its stored profile and threshold.

A LIKE subscription's tag ("l:" + hash of the sorted ids) keys one row here, shared by
every chat that follows the same set (`bot.topics.like`, `storage.like_sets`).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
# Re-chained at merge after 0015/0016 (other branches): only this line changes.
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "like_sets",
        sa.Column("tag", sa.String(length=128), nullable=False),
        sa.Column("arxiv_ids", sa.Text(), nullable=False),
        sa.Column("profile", sa.Text(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tag", name=op.f("pk_like_sets")),
    )


def downgrade() -> None:
    op.drop_table("like_sets")
