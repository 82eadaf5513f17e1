"""What the benches share: fresh databases and bulk seeding, child processes, timing, verdicts.

- `fresh_database` gives a new, empty database (a SQLite file in a temporary folder, or a
  PostgreSQL database of its own on the test server, `tests.support.postgres`) and removes it
  afterwards; `load_tables` fills one in bulk, bypassing the ORM, for setups too large to
  insert through the repositories. Generated papers take the same shape in every bench:
  `paper_row`, `tag_row`, about three tags each (TAGS_PER_PAPER), Zipf-like topic
  popularity (`zipf_weights`).
- `start_module` and `run_module` run a bench module again in a child process (a fake server
  on another core, a setup whose memory must not count, one backend at a time), from the
  repository root as `python -m`; `last_json_line` splits a child's output into what it
  printed and the JSON line it ended with.
- `best_of`, `peak_rss_mb` and `verdict` are how the benches time and judge their figures.
"""

from __future__ import annotations

import functools
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime
from typing import Any

import asyncpg

from bench.fixtures import ROOT
from storage.database import Database
from tests.support.postgres import create_database, drop_database

#: A table to seed: its column names and its rows, as tuples in that order.
Rows = tuple[Sequence[str], Iterable[tuple[Any, ...]]]
#: How many tags generated papers carry, drawn uniformly from this: about 3 a paper.
TAGS_PER_PAPER = (1, 2, 2, 3, 3, 3, 4, 4, 5)
#: The columns of `papers` and `paper_tags` that `paper_row` and `tag_row` fill.
PAPER_COLUMNS = (
    "id",
    "arxiv_id",
    "version",
    "title",
    "abstract",
    "authors",
    "categories",
    "primary_category",
    "announced",
    "ingested_at",
    "updated_at",
)
TAG_COLUMNS = ("paper_id", "tag", "source", "why")


# --- databases -----------------------------------------------------------------------


@asynccontextmanager
async def fresh_database(backend: str, name: str, *, migrate: bool = True) -> AsyncIterator[str]:
    """The URL of a new database, migrated to head unless `migrate` is false (a child process
    may have to do it); `backend` is "sqlite" or "postgres". Removed afterwards; on
    PostgreSQL, creating it fails with OSError or SQLAlchemyError when the server is away."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix=f"{name}_") as folder:
            url = f"sqlite+aiosqlite:///{folder}/{name}.db"
            if migrate:
                await migrate_to_head(url)
            yield url
        return
    url = await create_database(name)
    try:
        if migrate:
            await migrate_to_head(url)
        yield url
    finally:
        await drop_database(url)


async def migrate_to_head(url: str) -> None:
    db = Database(url)
    try:
        await db.upgrade()
    finally:
        await db.dispose()


async def load_tables(url: str, tables: Mapping[str, Rows]) -> None:
    """Bulk-insert rows into a migrated database: executemany with the stdlib driver on
    SQLite (values in SQLAlchemy's storage formats), COPY on PostgreSQL, after which the id
    sequences move past the ids given and VACUUM ANALYZE runs, as autovacuum would have."""
    if url.startswith("sqlite"):
        _load_sqlite(url.split("///", 1)[1], tables)
    else:
        await _load_postgres(url, tables)


@functools.cache
def _stored(value: date) -> str:
    """A date or time as SQLAlchemy stores it on SQLite: ISO dates, naive UTC timestamps
    (cached: generated rows repeat a few)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")
    return value.isoformat()


def _stored_rows(
    conn: sqlite3.Connection, table: str, columns: Sequence[str], rows: Iterable[tuple[Any, ...]]
) -> Iterable[Sequence[Any]]:
    """`rows` with the values of the table's DATE and DATETIME columns as stored."""
    declared = {name: kind for _, name, kind, *_ in conn.execute(f"PRAGMA table_info({table})")}
    timed = [i for i, name in enumerate(columns) if declared[name] in ("DATE", "DATETIME")]
    if not timed:
        return rows

    def stored(row: tuple[Any, ...]) -> list[Any]:
        values = list(row)
        for i in timed:
            if values[i] is not None:
                values[i] = _stored(values[i])
        return values

    return map(stored, rows)


def _load_sqlite(path: str, tables: Mapping[str, Rows]) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    with conn:
        for table, (columns, rows) in tables.items():
            marks = ", ".join("?" * len(columns))
            conn.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                _stored_rows(conn, table, columns, rows),
            )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


async def _load_postgres(url: str, tables: Mapping[str, Rows]) -> None:
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        for table, (columns, rows) in tables.items():
            await conn.copy_records_to_table(table, records=rows, columns=list(columns))
            if "id" in columns:  # ids were given explicitly: move the sequence past them
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" (SELECT max(id) FROM {table}))"
                )
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()


def paper_row(
    paper_id: int,
    arxiv_id: str,
    title: str,
    category: str | None,
    announced: date | None,
    stored: datetime,
) -> tuple[Any, ...]:
    """A generated paper (no abstract or authors, in one category or none) as a row of
    PAPER_COLUMNS."""
    categories = json.dumps([category] if category else [])
    return (paper_id, arxiv_id, 1, title, "", "[]", categories, category, announced, stored, stored)


def tag_row(paper_id: int, tag: str) -> tuple[Any, ...]:
    """A catalog rule's tag on a generated paper (no matched words kept), as a row of
    TAG_COLUMNS."""
    return (paper_id, tag, "rule", "[]")


def zipf_weights(count: int, skew: float) -> list[float]:
    """Zipf-like popularity of `count` ranked items: the item of rank r weighs 1 / r**skew."""
    return [1.0 / (rank + 1) ** skew for rank in range(count)]


# --- child processes -----------------------------------------------------------------


def _command(module: str, args: Iterable[str]) -> list[str]:
    return [sys.executable, "-m", module, *args]


def start_module(module: str, *args: str, **popen: Any) -> subprocess.Popen[Any]:
    """`python -m module args` from the repository root, running beside this process."""
    return subprocess.Popen(_command(module, args), cwd=ROOT, **popen)


def run_module(module: str, *args: str, capture: bool = False) -> str:
    """`python -m module args` from the repository root, to its end (failing if it fails);
    what it printed when `capture`, else it prints to this process's output."""
    done = subprocess.run(
        _command(module, args),
        cwd=ROOT,
        check=True,
        stdout=subprocess.PIPE if capture else None,
        text=True,
    )
    return done.stdout or ""


def last_json_line(output: str) -> tuple[list[str], Any]:
    """A bench's output split into the lines it printed and the JSON line it ended with."""
    lines = output.rstrip().splitlines()
    return lines[:-1], json.loads(lines[-1])


# --- timing and judging --------------------------------------------------------------


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    """The shortest of `repeat` timed calls of `fn`, in seconds (a shared machine only ever
    makes a run slower)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_rss_mb() -> float:
    """This process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def verdict(met: bool) -> str:
    """How a figure is judged against its goal in the printed report."""
    return "ok" if met else "MISSED"
