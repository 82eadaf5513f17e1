"""When each "papers like these" set was calibrated, and on how many stored papers.

The worker recalibrates a set's threshold as the index grows (`bot.services.like_recalibration`):
a set made on the bundled day once the bot has stored enough papers of its own, any set a week
after its last calibration. Sets stored before this revision count as calibrated on the bundled
day, so they are recalibrated once on the bot's own papers.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("like_sets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("calibrated_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(
            sa.Column("calibrated_on", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("like_sets", schema=None) as batch_op:
        batch_op.drop_column("calibrated_on")
        batch_op.drop_column("calibrated_at")
