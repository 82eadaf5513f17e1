"""New papers join SQLite's full-text index (`papers_fts`, migration 0012) in bulk.

On SQLite the index follows updates and deletes of `papers` through triggers, but new
papers are added here, by the statement that stores them (`PaperRepository.upsert`), one
`INSERT ... SELECT` per chunk: FTS5 indexes a daily listing (1,504 papers) about four times
faster that way than through a trigger fired for each row (bench/bench_search.py). Any
other way of adding rows to `papers` must index them too (or rebuild the index:
`INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')`). PostgreSQL needs nothing: its
`search_vector` column is generated from the row.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from storage.repositories import chunks

_INDEX_NEW = text(
    "INSERT INTO papers_fts(rowid, title, abstract) "
    "SELECT id, title, abstract FROM papers WHERE arxiv_id IN :ids"
).bindparams(bindparam("ids", expanding=True))


async def index_new_papers(session: AsyncSession, arxiv_ids: Sequence[str]) -> None:
    """Add these just-inserted papers to the SQLite full-text index."""
    if session.get_bind().dialect.name != "sqlite":
        return
    for chunk in chunks(list(arxiv_ids), 500):
        await session.execute(_INDEX_NEW, {"ids": list(chunk)})
