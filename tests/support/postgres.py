"""The PostgreSQL server that tests and benches use, and throwaway databases on it.

PAPERWATCH_TEST_POSTGRES_URL names it (default: the local server's `test` database).
A whole database, rather than a schema, is for runs where other processes connect.
A throwaway cluster, started by the test on its own port, is for tests that restart
the server.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import create_async_engine

PG_URL = os.environ.get(
    "PAPERWATCH_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)


async def _admin(statement: str) -> None:
    engine = create_async_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(statement))
    finally:
        await engine.dispose()


async def create_database(prefix: str) -> str:
    """A new empty database on the server; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    await _admin(f'CREATE DATABASE "{name}"')
    return PG_URL.rsplit("/", 1)[0] + f"/{name}"


async def drop_database(url: str) -> None:
    """Drop a database `create_database` made, closing its connections."""
    name = url.rsplit("/", 1)[1]
    await _admin(f'DROP DATABASE "{name}" WITH (FORCE)')


async def registered_processes(url: str) -> int:
    """How many `paperwatch run` processes the database at `url` lists (0 before it is
    migrated)."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return int((await conn.execute(text("SELECT count(*) FROM processes"))).scalar_one())
    except SQLAlchemyError:  # no processes table yet
        return 0
    finally:
        await engine.dispose()


@dataclass(frozen=True)
class Cluster:
    """A PostgreSQL server of the test's own: its URL, and how to restart, stop or start it."""

    url: str
    data: Path
    bindir: Path
    options: str = ""  # the server's options (its port), given again at each start

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: every session ends, as in a real restart."""
        log = self.data.parent / "log"  # the server must not inherit our pipes
        _as_postgres(
            [self.bindir / "pg_ctl", "-D", self.data, "-l", log, "-m", "fast", "-w", "restart"]
        )

    def stop(self) -> None:
        """`pg_ctl stop -m fast`: every session ends and no new one can start."""
        _as_postgres([self.bindir / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"])

    def start(self) -> None:
        log = self.data.parent / "log"
        _as_postgres(
            [self.bindir / "pg_ctl", "-D", self.data, "-o", self.options, "-l", log, "-w", "start"]
        )


def postgres_bindir() -> Path | None:
    """The newest installed PostgreSQL's binaries (initdb, pg_ctl), if any."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3])
    )
    return Path(found[-1]).parent if found else None


def _as_postgres(command: list[object]) -> None:
    """Run a PostgreSQL tool; as the `postgres` user when we are root (initdb refuses)."""
    argv = [str(part) for part in command]
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "postgres", "--", *argv]
    subprocess.run(argv, check=True, capture_output=True, timeout=120)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def throwaway_cluster(bindir: Path) -> Iterator[Cluster]:
    """initdb a new cluster in a temporary folder, start it on a free port of 127.0.0.1
    (trust auth, fsync off), and always stop and remove it afterwards."""
    home = Path(tempfile.mkdtemp(prefix="pw_pg_"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(home, owner.pw_uid, owner.pw_gid)
    data, port = home / "data", _free_port()
    try:
        _as_postgres([bindir / "initdb", "-D", data, "-A", "trust", "-U", "postgres", "-N"])
        options = f"-p {port} -c listen_addresses=127.0.0.1 -k {home} -c fsync=off"
        _as_postgres(
            [bindir / "pg_ctl", "-D", data, "-o", options, "-l", home / "log", "-w", "start"]
        )
        url = f"postgresql+asyncpg://postgres@127.0.0.1:{port}/postgres"
        yield Cluster(url, data, bindir, options)
    finally:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            _as_postgres([bindir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"])
        shutil.rmtree(home, ignore_errors=True)
