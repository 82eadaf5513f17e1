"""`paperwatch db backup PATH` as an operator runs it: on a SQLite file a worker keeps
writing to, restored into a fresh folder; on PostgreSQL, the pg_dump command it prints.
And `db downgrade`, with what a version older than the schema says on start."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import text

from bot.cli import main
from bot.domain import ChatRef, Platform
from storage.database import Database
from tests.conftest import REQUIRE_PG, require_postgres
from tests.e2e.test_cli import paperwatch
from tests.support.live_writer import LiveWriter, head_revision, restore
from tests.support.postgres import create_database, drop_database

LINE = re.compile(r"backed up to (?P<path>.+): (?P<size>[\d,]+) bytes, schema at revision (\S+)")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """`paperwatch ARGS` run in-process (`bot.cli.main`), answered like `subprocess.run`:
    a process start costs seconds, and only two tests here need a process of its own."""

    def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        with monkeypatch.context() as patch:
            patch.chdir(cwd)
            for name, value in env.items():
                patch.setenv(name, value)
            patch.setenv("PAPERWATCH_LOG_LEVEL", "WARNING")
            capsys.readouterr()
            code = main(list(args))
            out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run


async def migrated(path: Path) -> str:
    url = f"sqlite+aiosqlite:///{path}"
    db = Database(url)
    await db.upgrade()
    await db.dispose()
    return url


def test_backup_of_a_live_database_restores_with_nothing_lost(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    url = asyncio.run(migrated(live / "paperwatch.db"))
    target = tmp_path / "backups" / "paperwatch-1.db"
    target.parent.mkdir()
    with LiveWriter(url) as writer:
        writer.wait_for(100)
        before = len(writer.committed)  # every one of these is committed
        result = paperwatch(
            "db", "backup", str(target), cwd=tmp_path, env={"PAPERWATCH_DATABASE_URL": url}
        )
        after = len(writer.committed)
        writer.wait_for(after + 20)  # still writing after the backup ended
    assert result.returncode == 0, result.stderr
    assert after > before, "the writer wrote nothing while the backup ran"
    printed = LINE.fullmatch(result.stdout.strip())
    assert printed, result.stdout
    assert printed["path"] == str(target)
    assert int(printed["size"].replace(",", "")) == target.stat().st_size
    assert printed[3] == head_revision()

    restored = restore(target, tmp_path / "fresh")
    assert restored.integrity == "ok"
    assert restored.revision == head_revision()
    assert len(restored.notices) >= before  # every row committed before the backup began
    assert restored.notices == writer.committed[: len(restored.notices)]  # one snapshot
    assert not list(target.parent.glob(".*.part"))  # no temporary file left behind


def test_an_existing_file_is_replaced_only_with_force(cli, tmp_path: Path) -> None:
    env = {"PAPERWATCH_DATABASE_URL": asyncio.run(migrated(tmp_path / "pw.db"))}
    target = tmp_path / "old-backup.db"
    target.write_text("an older backup")

    refused = cli("db", "backup", str(target), cwd=tmp_path, env=env)
    assert refused.returncode == 2
    assert refused.stderr == f"paperwatch: {target} exists: add --force to replace it\n"
    assert target.read_text() == "an older backup"

    forced = cli("db", "backup", str(target), "--force", cwd=tmp_path, env=env)
    assert forced.returncode == 0, forced.stderr
    assert LINE.fullmatch(forced.stdout.strip())
    assert target.read_bytes().startswith(b"SQLite format 3\0")

    # A write-ahead log beside PATH would be applied to the new copy: a database in use.
    Path(f"{target}-wal").write_bytes(b"")
    in_use = cli("db", "backup", str(target), "--force", cwd=tmp_path, env=env)
    _one_line(in_use, f"{target} is in use as a database ({target}-wal exists)")


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("{tmp}", "{tmp} is a folder: give the backup a file name in it"),
        ("{tmp}/no/such/folder/b.db", "cannot write {tmp}/no/such/folder/b.db: folder"),
        ("/proc/b.db", "cannot write a file in /proc"),
        ("{tmp}/pw.db", "{tmp}/pw.db is the database itself"),
    ],
)
def test_a_bad_path_is_one_clear_line(cli, tmp_path: Path, where: str, message: str) -> None:
    env = {"PAPERWATCH_DATABASE_URL": asyncio.run(migrated(tmp_path / "pw.db"))}
    target = where.format(tmp=tmp_path)
    result = cli("db", "backup", target, "--force", cwd=tmp_path, env=env)
    _one_line(result, message.format(tmp=tmp_path))


def test_a_missing_database_is_one_clear_line_and_stays_missing(cli, tmp_path: Path) -> None:
    missing = tmp_path / "never-created.db"
    env = {"PAPERWATCH_DATABASE_URL": f"sqlite+aiosqlite:///{missing}"}
    result = cli("db", "backup", str(tmp_path / "b.db"), cwd=tmp_path, env=env)
    _one_line(result, f"no database at {missing}")
    assert not missing.exists() and not (tmp_path / "b.db").exists()


def _one_line(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("paperwatch: ") and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_postgres_prints_the_pg_dump_command_never_the_password(cli, tmp_path: Path) -> None:
    url = "postgresql+asyncpg://paperwatch:Sup3r-s3cret@db.internal:6543/alerts?ssl=require"
    result = cli("db", "backup", "nightly.dump", cwd=tmp_path, env={"PAPERWATCH_DATABASE_URL": url})
    assert result.returncode == 0, result.stderr
    assert "Sup3r-s3cret" not in result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == (
        "PGPASSWORD=PASSWORD PGSSLMODE=require pg_dump --format=custom --file=nightly.dump"
        " --host=db.internal --port=6543 --username=paperwatch --dbname=alerts"
    )
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing connected to


@pytest.mark.postgres
def test_the_printed_pg_dump_command_backs_up_and_pg_restore_restores(tmp_path: Path) -> None:
    """The command as printed, run by a shell, then the README's restore into a fresh
    database: the rows are there and the schema is at head."""
    require_postgres()
    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        message = "pg_dump and pg_restore are not on PATH"
        if REQUIRE_PG:
            pytest.fail(message + "; CI requires them", pytrace=False)
        pytest.skip(message + " (install the PostgreSQL client to run this test)")
    source = asyncio.run(create_database("pw_backup_src"))
    fresh = asyncio.run(create_database("pw_backup_dst"))
    try:
        db_url = asyncio.run(_migrated_with_a_chat(source))
        printed = paperwatch(
            "db", "backup", "pw.dump", cwd=tmp_path, env={"PAPERWATCH_DATABASE_URL": db_url}
        )
        assert printed.returncode == 0, printed.stderr
        dumped = subprocess.run(
            ["sh", "-c", printed.stdout], cwd=tmp_path, capture_output=True, text=True
        )
        assert dumped.returncode == 0, dumped.stderr
        dbname = fresh.rsplit("/", 1)[1]
        restored = subprocess.run(
            [
                "pg_restore",
                "--no-owner",
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-d",
                dbname,
                "pw.dump",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert restored.returncode == 0, restored.stderr
        assert asyncio.run(_chat_and_revision(fresh)) == (4242, head_revision())
    finally:
        asyncio.run(drop_database(source))
        asyncio.run(drop_database(fresh))


async def _migrated_with_a_chat(url: str) -> str:
    db = Database(url)
    try:
        await db.upgrade()
        async with db.uow() as uow:
            await uow.chats.get_or_create(ChatRef(Platform.TELEGRAM, "4242"))
            await uow.commit()
    finally:
        await db.dispose()
    return url


async def _chat_and_revision(url: str) -> tuple[int, str | None]:
    db = Database(url)
    try:
        async with db.engine.connect() as conn:
            chat = (await conn.execute(text("SELECT external_id FROM chats"))).scalar_one()
        return chat, await db.current_revision()
    finally:
        await db.dispose()


def test_downgrade_then_an_older_schema_is_upgraded_again(cli, tmp_path: Path) -> None:
    """`db downgrade` (what to run before installing an older version), and the start of
    a version older than the schema: one line that says what to do, no traceback."""
    env = {"PAPERWATCH_DATABASE_URL": asyncio.run(migrated(tmp_path / "pw.db"))}
    down = cli("db", "downgrade", "0009", cwd=tmp_path, env=env)
    assert down.returncode == 0, down.stderr
    assert down.stdout == "database schema at revision 0009\n"
    up = cli("db", "upgrade", cwd=tmp_path, env=env)
    assert up.stdout == f"database schema at revision {head_revision()}\n", up.stderr

    unknown = cli("db", "downgrade", "0042", cwd=tmp_path, env=env)
    _one_line(unknown, "cannot downgrade the database schema: Can't locate revision")
    with contextlib.closing(sqlite3.connect(tmp_path / "pw.db")) as conn, conn:
        conn.execute("UPDATE alembic_version SET version_num = '0999'")  # a newer version's
    newer = cli("db", "upgrade", cwd=tmp_path, env=env)
    _one_line(newer, "the database schema is newer than this paperwatch")
    assert "install the version that migrated it, or restore a backup" in newer.stderr
