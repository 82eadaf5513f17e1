"""PostgreSQL keeps the search index in a table of its own, filled by ingest in bulk.

0013's generated column computed each paper's tsvector inside the INSERT of `papers`,
and put it in the row: every later UPDATE of the paper (fan-out's `batch_id`, a new
version) wrote the lexemes into the GIN index again, since `batch_id` is indexed and such
an update is never HOT. Storing a daily listing took 48% longer than without the index
(bench/bench_search.py). Now, as on SQLite (`papers_fts`, external content), the index is
a table beside `papers`:

- `papers_fts(paper_id, search_vector)`, one row per paper (`ON DELETE CASCADE`), with
  the GIN index; the vector is what 0013 generated (title weight A, abstract B,
  'english'), computed by one function, `papers_search_vector(title, abstract)`;
- new papers are added by `storage.search_index`, one `INSERT ... SELECT` per chunk, in
  the transaction that stores them (ingest runs it while the tagger runs);
- a trigger keeps the vector when a paper's title or abstract changes.

SQLite is unchanged. Downgrade puts 0013's generated column and its index back.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VECTOR = """setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
        || setweight(to_tsvector('english'::regconfig, coalesce(abstract, '')), 'B')"""

_UP = (
    f"""CREATE FUNCTION papers_search_vector(title text, abstract text) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT {_VECTOR} $$""",
    """CREATE TABLE papers_fts (
        paper_id integer NOT NULL,
        search_vector tsvector NOT NULL,
        CONSTRAINT pk_papers_fts PRIMARY KEY (paper_id),
        CONSTRAINT fk_papers_fts_paper_id_papers FOREIGN KEY (paper_id)
            REFERENCES papers (id) ON DELETE CASCADE
    )""",
    "INSERT INTO papers_fts (paper_id, search_vector) SELECT id, search_vector FROM papers",
    "CREATE INDEX ix_papers_fts_search_vector ON papers_fts USING gin (search_vector)",
    """CREATE FUNCTION papers_fts_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE papers_fts SET search_vector = papers_search_vector(NEW.title, NEW.abstract)
        WHERE paper_id = NEW.id;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract ON papers
        FOR EACH ROW
        WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.abstract IS DISTINCT FROM NEW.abstract)
        EXECUTE FUNCTION papers_fts_update()""",
    "DROP INDEX ix_papers_search_vector",
    "ALTER TABLE papers DROP COLUMN search_vector",
)
_DOWN = (
    f"ALTER TABLE papers ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({_VECTOR}) STORED",
    "CREATE INDEX ix_papers_search_vector ON papers USING gin (search_vector)",
    "DROP TRIGGER papers_fts_update ON papers",
    "DROP FUNCTION papers_fts_update()",
    "DROP TABLE papers_fts",
    "DROP FUNCTION papers_search_vector(text, text)",
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _UP:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _DOWN:
            op.execute(statement)
