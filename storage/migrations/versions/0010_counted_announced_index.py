"""Momentum's "which days does the index hold" from an index alone.

Since 0009 every momentum figure leaves the bundled sample out (`NOT papers.sample`). The
coverage rule reads the distinct announcement days of the counted papers of the last weeks,
and the share of all new papers counts them; with only `announced` indexed, each of those
papers was fetched from the table to read its `sample` flag, which made one topic's
`/momentum` 24 times slower on 200,000 papers (bench/bench_momentum.py). With (sample,
announced) in one index both read the index alone.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.create_index("ix_papers_sample_announced", ["sample", "announced"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.drop_index("ix_papers_sample_announced")
