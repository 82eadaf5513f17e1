"""Fan-out: the chats following a tag, straight from an index.

`OutboxRepository.enqueue_papers` joins every new paper's tags to the subscriptions
on `tag` and needs only `chat_id` from them. With (tag, chat_id) in one index SQLite
reads the followers of a tag from the index alone (a covering index) instead of
visiting the table once per (paper tag, follower) pair; see bench/bench_fanout.py.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.create_index("ix_subscriptions_tag_chat", ["tag", "chat_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_index("ix_subscriptions_tag_chat")
