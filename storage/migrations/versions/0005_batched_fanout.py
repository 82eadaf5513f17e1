"""Fan-out by batch: one outbox row per chat for each ingest's new papers.

One row per (chat, paper) made a busy day millions of rows (2,000 papers to 100,000
chats is 7.3 million), more than either database writes in the time an ingest should
take. Now the new papers of an ingest form a batch, each paper joins at most one
batch, and a chat gets one row per batch; the worker works out which of the batch's
papers the chat follows when it first claims the row. Existing per-paper rows keep
their paper as an explicit list in their payload.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("papers", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batches")),
    )
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("batch_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_papers_batch_id"), ["batch_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_papers_batch_id_batches"),
            "batches",
            ["batch_id"],
            ["id"],
            ondelete="SET NULL",
        )

    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "UPDATE outbox SET payload = (payload::jsonb"
            " || jsonb_build_object('papers', jsonb_build_array(paper_id)))::json"
            " WHERE paper_id IS NOT NULL"
        )
    else:
        op.execute(
            "UPDATE outbox SET payload = json_set(payload, '$.papers', json_array(paper_id))"
            " WHERE paper_id IS NOT NULL"
        )
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_constraint("chat_paper_kind", type_="unique")
        batch_op.drop_constraint(batch_op.f("fk_outbox_paper_id_papers"), type_="foreignkey")
        batch_op.drop_column("paper_id")
        batch_op.add_column(sa.Column("batch_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_outbox_batch_id_batches"),
            "batches",
            ["batch_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_unique_constraint("chat_batch", ["chat_id", "batch_id"])


def downgrade() -> None:
    # Rows of a batch cannot be split back into papers here: they are dropped, like
    # everything else about batches.
    op.execute("DELETE FROM outbox WHERE batch_id IS NOT NULL")
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_constraint("chat_batch", type_="unique")
        batch_op.drop_constraint(batch_op.f("fk_outbox_batch_id_batches"), type_="foreignkey")
        batch_op.drop_column("batch_id")
        batch_op.add_column(sa.Column("paper_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_outbox_paper_id_papers"),
            "papers",
            ["paper_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_unique_constraint("chat_paper_kind", ["chat_id", "paper_id", "kind"])
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_papers_batch_id_batches"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_papers_batch_id"))
        batch_op.drop_column("batch_id")
    op.drop_table("batches")
