"""`paperwatch db backup`: a consistent copy of a SQLite database while the bot runs on it,
or, on PostgreSQL, the `pg_dump` command that makes one.

SQLite is copied with its online backup API, on a connection of its own, a few pages a
step with a pause between steps: in rollback-journal mode a writer waits for one step at
most, and in WAL mode (paperwatch's) it never waits. A write by another connection makes
SQLite start the copy again from the first page; after a few such restarts the rest is
copied in one step, which reads one snapshot (in WAL mode, writers go on meanwhile). The
copy is written to a temporary file beside PATH and renamed into place once complete.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

PAGES_PER_STEP = 1024  # 4 MiB at SQLite's default page size
PAUSE = 0.005  # seconds between steps: a writer's turn
MAX_RESTARTS = 3  # then the rest in one step


class BackupError(RuntimeError):
    """The backup cannot be made; the message is one line for a person."""


@dataclass(frozen=True, slots=True)
class Backup:
    path: Path
    size: int
    revision: str | None  # the copy's Alembic revision; None for a database never migrated
    restarts: int  # how often a write started the copy again


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL; None for PostgreSQL (pg_dump backs it up)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise BackupError(f"PAPERWATCH_DATABASE_URL is not a database URL: {url!r}") from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        return None
    if backend != "sqlite":
        raise BackupError(f"cannot back up a {backend!r} database: only SQLite and PostgreSQL")
    if not parsed.database or parsed.database == ":memory:":
        raise BackupError("the database is in memory (PAPERWATCH_DATABASE_URL): nothing to back up")
    return Path(parsed.database)


def pg_dump_command(url: str, target: Path) -> str:
    """The pg_dump command that writes the database of `url` to `target`, with the text
    PASSWORD where the password goes: the password itself is never printed."""
    parsed = make_url(url)
    host = parsed.host or parsed.query.get("host")
    options = {
        "host": host if isinstance(host, str) else None,
        "port": parsed.port,
        "username": parsed.username,
        "dbname": parsed.database,
    }
    words = ["pg_dump", "--format=custom", f"--file={target}"]
    words += [f"--{name}={value}" for name, value in options.items() if value]
    env = ["PGPASSWORD=PASSWORD"] if parsed.password is not None else []
    sslmode = parsed.query.get("sslmode") or parsed.query.get("ssl")
    if isinstance(sslmode, str):
        env.append(f"PGSSLMODE={shlex.quote(sslmode)}")
    return " ".join(env + [shlex.quote(word) for word in words])


def backup_sqlite(
    source: Path,
    target: Path,
    *,
    force: bool = False,
    pages: int = PAGES_PER_STEP,
    pause: float = PAUSE,
) -> Backup:
    """Copy the database at `source` to `target` (replaced only with `force`)."""
    _check_target(source, target, force)
    if not source.is_file():
        raise BackupError(f"no database at {source} (PAPERWATCH_DATABASE_URL): nothing to back up")
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    except OSError as exc:
        raise BackupError(f"cannot write a file in {target.parent}: {exc.strerror or exc}") from exc
    os.close(fd)
    partial = Path(name)
    try:
        restarts = _copy(source, partial, pages, pause)
        revision = _revision(partial)
        _move(partial, target, force)
    finally:
        partial.unlink(missing_ok=True)
    return Backup(target, target.stat().st_size, revision, restarts)


def _check_target(source: Path, target: Path, force: bool) -> None:
    if target.is_dir():
        raise BackupError(f"{target} is a folder: give the backup a file name in it")
    if not target.parent.is_dir():
        raise BackupError(f"cannot write {target}: folder {target.parent} does not exist")
    if not target.exists():
        return
    if source.exists() and target.samefile(source):
        raise BackupError(f"{target} is the database itself: back it up to another file")
    if not force:
        raise BackupError(f"{target} exists: add --force to replace it")
    for sidecar in ("-wal", "-journal"):
        if Path(f"{target}{sidecar}").exists():
            raise BackupError(f"{target} is in use as a database ({target}{sidecar} exists)")


class _TooManyRestarts(Exception):
    pass


class _Steps:
    """The backup's progress callback: a pause after each step, and a count of restarts
    (a step that leaves no fewer pages to copy than the step before)."""

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self.left: int | None = None
        self.restarts = 0

    def __call__(self, status: int, remaining: int, total: int) -> None:
        if status == sqlite3.SQLITE_OK and self.left is not None and remaining >= self.left:
            self.restarts += 1
            if self.restarts > MAX_RESTARTS:
                raise _TooManyRestarts
        self.left = remaining
        if remaining:
            time.sleep(self.pause)


def _copy(source: Path, partial: Path, pages: int, pause: float) -> int:
    steps = _Steps(pause)
    try:  # mode=rw: a database that is not there is never created
        src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=rw", uri=True, timeout=10)
        with contextlib.closing(src), contextlib.closing(sqlite3.connect(partial)) as dst:
            src.execute("PRAGMA schema_version").fetchone()  # is it a database at all?
            try:
                src.backup(dst, pages=pages, progress=steps)
            except _TooManyRestarts:
                src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    except sqlite3.Error as exc:
        raise BackupError(f"cannot back up {source}: {exc}") from exc
    return steps.restarts


def _revision(path: Path) -> str | None:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        try:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.OperationalError:  # no such table: never migrated
            return None
    return row[0] if row else None


def _move(partial: Path, target: Path, force: bool) -> None:
    """Rename the complete copy into place: over `target` with `force`, else only if no
    file has appeared there meanwhile (a hard link never replaces one)."""
    try:
        if force:
            os.replace(partial, target)
        else:
            os.link(partial, target)
    except FileExistsError:
        raise BackupError(f"{target} exists: add --force to replace it") from None
    except OSError as exc:
        raise BackupError(f"cannot write {target}: {exc.strerror or exc}") from exc
    with contextlib.suppress(OSError):  # the rename itself survives a power cut
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
