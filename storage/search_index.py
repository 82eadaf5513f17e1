"""New papers join the full-text index (`papers_fts`, migrations 0013 and 0015) in bulk.

On both databases the index follows updates and deletes of `papers` by itself (triggers,
and on PostgreSQL a cascading foreign key), but new papers are added here, one
`INSERT ... SELECT` per chunk rather than a trigger or a generated column per row: on
SQLite FTS5 indexes a daily listing (1,504 papers) four times faster that way; on
PostgreSQL the vectors are then kept out of the `papers` rows, which ingest updates again
(bench/bench_search.py).

`PaperRepository.upsert` only notes the papers it inserts (`note_new_papers`, in the
session's `info`); `index_new_papers` indexes what was noted. The unit of work runs it
before every commit and the search before every search, so nothing is committed or
searched unindexed; ingest runs it earlier, while its tagger works in a thread (the
database computes the vectors on its own core meanwhile). Any other way of adding rows
to `papers` must index them too, or rebuild the index (`rebuild_statements`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from storage.repositories import chunks

_NOTED = "papers_to_index"  # key of the session's `info`: arXiv ids stored, not indexed yet
_INDEX_NEW = {
    "sqlite": text(
        "INSERT INTO papers_fts(rowid, title, abstract) "
        "SELECT id, title, abstract FROM papers WHERE arxiv_id IN :ids"
    ),
    "postgresql": text(
        "INSERT INTO papers_fts(paper_id, search_vector) "
        "SELECT id, papers_search_vector(title, abstract) FROM papers WHERE arxiv_id IN :ids"
    ),
}
_REBUILD = {
    "sqlite": ("INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')",),
    "postgresql": (
        "DELETE FROM papers_fts",
        "INSERT INTO papers_fts(paper_id, search_vector) "
        "SELECT id, papers_search_vector(title, abstract) FROM papers",
    ),
}


def note_new_papers(session: AsyncSession, arxiv_ids: Sequence[str]) -> None:
    """Remember that these papers were just inserted and are not indexed yet."""
    session.info.setdefault(_NOTED, []).extend(arxiv_ids)


def forget_new_papers(session: AsyncSession) -> None:
    """The transaction was rolled back: the noted papers are gone with it."""
    session.info.pop(_NOTED, None)


async def index_new_papers(session: AsyncSession) -> int:
    """Add the papers noted since the last call to the index; how many."""
    arxiv_ids = session.info.pop(_NOTED, [])
    statement = _INDEX_NEW[session.get_bind().dialect.name].bindparams(
        bindparam("ids", expanding=True)
    )
    for chunk in chunks(list(arxiv_ids), 500):
        await session.execute(statement, {"ids": list(chunk)})
    return len(arxiv_ids)


def rebuild_statements(dialect: str) -> tuple[str, ...]:
    """SQL that indexes every stored paper again (after a bulk load that bypassed storage)."""
    return _REBUILD[dialect]
