"""Outbox rows remember when their failures began and which process claimed them.

`failing_since`: the first failure of the current run of failures; a row dies only
once failures have lasted the give-up budget (PAPERWATCH_DELIVERY_GIVE_UP_AFTER).
`claimed_by`: the process holding the claim, so that the claims of a process that
died are released as soon as it is known to be dead, not when the lease ends.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("claimed_by", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_column("claimed_by")
        batch_op.drop_column("failing_since")
