"""Momentum reads which days the index holds from a small table, not from every paper.

Coverage (the distinct announcement days of the compared weeks) and the share of all new
papers (their count over the last 28 days) walked every counted paper of those weeks, even
from the (sample, announced) index of 0010: on a million papers, a fifth of one topic's
`/momentum` and of every topic's (bench/bench_momentum.py). `announced_days` holds, per
announcement day, how many counted papers (not a sample, the date known) the index holds;
ingest keeps it in the transaction that stores the papers (`storage.announced_days`), and
this fills it from the papers an existing database holds.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    days = op.create_table(
        "announced_days",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("papers", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("day", name=op.f("pk_announced_days")),
    )
    papers = sa.table(
        "papers",
        sa.column("announced", sa.Date()),
        sa.column("sample", sa.Boolean()),
    )
    counted = (
        sa.select(papers.c.announced, sa.func.count())
        .where(papers.c.announced.isnot(None), papers.c.sample == sa.false())
        .group_by(papers.c.announced)
    )
    op.execute(days.insert().from_select(["day", "papers"], counted))


def downgrade() -> None:
    op.drop_table("announced_days")
