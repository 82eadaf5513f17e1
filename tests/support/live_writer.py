"""A worker writing to a database while it is backed up, and a restore of the backup.

`LiveWriter` runs in a thread of its own, with its own event loop and `Database`: it
enqueues one notice per transaction through the outbox repository, one after another,
until stopped, and lists the text of each notice once its commit has returned (and how
long each transaction took, for bench.bench_backup).
`restore` copies a backup into a fresh folder, opens it as paperwatch does (migrations
first), and reads back what it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from alembic.script import ScriptDirectory
from sqlalchemy import event, text

from bot.domain import ChatRef, Platform
from bot.outbox_payloads import OutboxKind
from storage.database import Database, alembic_config
from tests.support.waiting import Waitable


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


class LiveWriter(Waitable):
    """`with LiveWriter(url) as writer:` a worker enqueueing notices until the block ends."""

    def __init__(self, url: str, *, keep_in_wal: bool = True) -> None:
        self.url = url
        self.keep_in_wal = keep_in_wal
        self.committed: list[str] = []  # notice texts, in commit order, once committed
        self.commits: list[tuple[float, float]] = []  # (perf_counter at start, seconds)
        self._cond = threading.Condition()  # notified at each commit
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="live-writer", daemon=True)

    def __enter__(self) -> LiveWriter:
        self._thread.start()
        self.wait_until(lambda w: bool(w.committed) or w._error is not None, seconds=30)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        if self._error is not None and kind is None:
            raise AssertionError(f"the writer failed: {self._error!r}") from self._error

    def _seen(self) -> str:
        return f"{len(self.committed)} notices committed; error: {self._error!r}"

    def wait_for(self, count: int) -> None:
        self.wait_until(lambda w: len(w.committed) >= count or w._error is not None, 30)
        assert self._error is None, self._error

    def _main(self) -> None:
        try:
            asyncio.run(self._write())
        except BaseException as exc:  # reported by __exit__ and wait_for
            with self._cond:
                self._error = exc
                self._cond.notify_all()

    async def _write(self) -> None:
        db = Database(self.url)
        if self.keep_in_wal:
            # Its commits stay in the write-ahead log, as they do while any reader holds
            # an older snapshot: a copy of the database file alone would miss them all.
            event.listen(db.engine.sync_engine, "connect", _no_checkpoints)
        try:
            async with db.uow() as uow:
                chat = await uow.chats.get_or_create(ChatRef(Platform.TELEGRAM, "77"))
                await uow.commit()
            n = 0
            while not self._stop.is_set():
                start = time.perf_counter()
                async with db.uow() as uow:
                    note = f"notice {n}"
                    await uow.outbox.enqueue_notice(
                        chat.id, OutboxKind.NOTE, note, datetime.now(UTC)
                    )
                    await uow.commit()
                with self._cond:
                    self.commits.append((start, time.perf_counter() - start))
                    self.committed.append(note)
                    self._cond.notify_all()
                n += 1
                await asyncio.sleep(0.001)  # another process's turn on a small machine
        finally:
            await db.dispose()


def _no_checkpoints(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA wal_autocheckpoint=0")
    cursor.close()


@dataclass(frozen=True, slots=True)
class Restored:
    notices: list[str]  # in the order they were written
    integrity: str  # PRAGMA integrity_check: "ok"
    revision: str | None


def restore(backup: Path, folder: Path) -> Restored:
    """Copy `backup` into `folder` and open it as `paperwatch run` would: migrate, read."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "paperwatch.db"
    shutil.copyfile(backup, path)
    notices, revision = asyncio.run(_open(path))
    with contextlib.closing(sqlite3.connect(path)) as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    return Restored(notices, integrity, revision)


async def _open(path: Path) -> tuple[list[str], str | None]:
    db = Database(f"sqlite+aiosqlite:///{path}")
    try:
        await db.upgrade()
        revision = await db.current_revision()
        async with db.engine.connect() as conn:
            rows = await conn.execute(text("SELECT payload FROM outbox ORDER BY id"))
            notices = [_notice(payload) for (payload,) in rows]
    finally:
        await db.dispose()
    return notices, revision


def _notice(payload: str | dict[str, object]) -> str:
    data = json.loads(payload) if isinstance(payload, str) else payload
    return str(data["text"])
