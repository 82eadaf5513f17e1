"""Full-text search over titles and abstracts (/search), kept by the database itself.

SQLite: `papers_fts`, an FTS5 table with external content on `papers` (it stores only the
index, reading the text from `papers`), tokenizer `porter unicode61 remove_diacritics 2`,
kept in step by two triggers (update of title or abstract; delete) and, for new papers, by
the statement that stores them (`storage.search_index`: in bulk, four times cheaper than
a trigger per row), then filled for the papers already stored ('rebuild'). A later
migration that recreates `papers` (Alembic's batch mode on SQLite copies the table and
drops the old one, and its triggers with it) must create these triggers again and
rebuild the index.

PostgreSQL: `papers.search_vector`, a stored generated tsvector (title weight A, abstract
weight B, 'english'), computed for every existing row when the column is added, with a
GIN index.

`storage.paper_search` reads both; the models do not describe them, and
`storage.paper_search.not_search_index` keeps autogenerate from proposing to drop them.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_UP = (
    """CREATE VIRTUAL TABLE papers_fts USING fts5(
        title, abstract, content='papers', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
        INSERT INTO papers_fts(papers_fts, rowid, title, abstract)
        VALUES ('delete', old.id, old.title, old.abstract);
    END""",
    """CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract ON papers BEGIN
        INSERT INTO papers_fts(papers_fts, rowid, title, abstract)
        VALUES ('delete', old.id, old.title, old.abstract);
        INSERT INTO papers_fts(rowid, title, abstract) VALUES (new.id, new.title, new.abstract);
    END""",
    "INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')",
)
_SQLITE_DOWN = (
    "DROP TRIGGER IF EXISTS papers_fts_update",
    "DROP TRIGGER IF EXISTS papers_fts_delete",
    "DROP TABLE IF EXISTS papers_fts",
)
_POSTGRES_UP = (
    """ALTER TABLE papers ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
        || setweight(to_tsvector('english'::regconfig, coalesce(abstract, '')), 'B')
    ) STORED""",
    "CREATE INDEX ix_papers_search_vector ON papers USING gin (search_vector)",
)
_POSTGRES_DOWN = (
    "DROP INDEX IF EXISTS ix_papers_search_vector",
    "ALTER TABLE papers DROP COLUMN IF EXISTS search_vector",
)


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_UP if postgres else _SQLITE_UP:
        op.execute(statement)


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_DOWN if postgres else _SQLITE_DOWN:
        op.execute(statement)
