"""The daily token budget of /ask's optional language model: one row per UTC day.

`storage.llm_budget` reserves a call's estimate in one conditional UPDATE (so processes
sharing the database cannot together pass PAPERWATCH_LLM_DAILY_TOKENS) and settles it with
the tokens the model reported.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "llm_budget",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("day", name=op.f("pk_llm_budget")),
    )


def downgrade() -> None:
    op.drop_table("llm_budget")
