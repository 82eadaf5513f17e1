"""Momentum reads each tag's papers per day from a small table, not every tag of every paper.

Every topic's weekly counts were a GROUP BY over `paper_tags` joined to `papers.announced`:
on a million papers, nearly all of the time of every topic's `/momentum`
(bench/bench_momentum.py). `tag_days` holds, per tag and announcement day, how many counted
papers (not a sample, the date known) carry the tag; the writers of tags and of papers keep
it in their transaction (`storage.tag_days`), and this fills it from the papers and tags an
existing database holds.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    counts = op.create_table(
        "tag_days",
        sa.Column("tag", sa.String(length=128), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("papers", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("tag", "day", name=op.f("pk_tag_days")),
    )
    op.create_index("ix_tag_days_day", "tag_days", ["day"], unique=False)
    papers = sa.table(
        "papers",
        sa.column("id", sa.Integer()),
        sa.column("announced", sa.Date()),
        sa.column("sample", sa.Boolean()),
    )
    tags = sa.table("paper_tags", sa.column("paper_id", sa.Integer()), sa.column("tag"))
    counted = (
        sa.select(tags.c.tag, papers.c.announced, sa.func.count())
        .join(papers, papers.c.id == tags.c.paper_id)
        .where(papers.c.announced.isnot(None), papers.c.sample == sa.false())
        .group_by(tags.c.tag, papers.c.announced)
    )
    op.execute(counts.insert().from_select(["tag", "day", "papers"], counted))


def downgrade() -> None:
    op.drop_index("ix_tag_days_day", table_name="tag_days")
    op.drop_table("tag_days")
