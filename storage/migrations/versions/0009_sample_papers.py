"""Papers remember whether they are bundled sample papers, which momentum never counts.

The sample is loaded into an empty database in one store (`load_sample_if_empty`), so in
an existing database its papers are the ones with a `sample:` key and every paper stored
with them: the same `ingested_at` (one insert stamps one time) or the same batch. Three
sample papers carry real arXiv ids, so the key alone would miss them; a real feed that
happened to bring the same id later found it stored and left it as it was.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("sample", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    papers = sa.table(
        "papers",
        sa.column("arxiv_id", sa.String()),
        sa.column("ingested_at", sa.DateTime()),
        sa.column("batch_id", sa.Integer()),
        sa.column("sample", sa.Boolean()),
    )
    keyed = papers.alias("keyed")
    is_sample_key = keyed.c.arxiv_id.like("sample:%")
    op.execute(
        papers.update()
        .where(
            sa.or_(
                papers.c.arxiv_id.like("sample:%"),
                papers.c.ingested_at.in_(sa.select(keyed.c.ingested_at).where(is_sample_key)),
                papers.c.batch_id.in_(
                    sa.select(keyed.c.batch_id).where(is_sample_key, keyed.c.batch_id.isnot(None))
                ),
            )
        )
        .values(sample=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.drop_column("sample")
