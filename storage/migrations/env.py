"""Alembic environment: runs on the connection paperwatch hands over (see storage.database)."""

from __future__ import annotations

from alembic import context

from storage.models import Base
from storage.paper_search import not_search_index

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `paperwatch db upgrade`, which passes a connection")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
    include_name=not_search_index,  # the search index of 0013 has no model
)
with context.begin_transaction():
    context.run_migrations()
