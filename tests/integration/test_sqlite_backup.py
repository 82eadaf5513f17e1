"""`storage.backup` copying a SQLite database that a worker keeps writing to.

The copy goes a page a step here, with pauses, so the worker commits between steps: each
commit makes SQLite start the copy again, and after a few restarts the rest goes in one
step. Whatever happens on the way, the copy is one snapshot: the notices in it are the
first N the worker committed, with every notice committed before the backup began.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from storage.backup import MAX_RESTARTS, backup_sqlite
from storage.database import Database
from tests.support.live_writer import LiveWriter, head_revision, restore


async def migrated(path: Path) -> str:
    url = f"sqlite+aiosqlite:///{path}"
    db = Database(url)
    await db.upgrade()
    await db.dispose()
    return url


def test_a_copy_in_small_steps_under_a_writer_is_one_snapshot(tmp_path: Path) -> None:
    source = tmp_path / "live" / "paperwatch.db"
    source.parent.mkdir()
    url = asyncio.run(migrated(source))
    target = tmp_path / "backup.db"
    with LiveWriter(url) as writer:
        writer.wait_for(200)
        before = len(writer.committed)
        copy = backup_sqlite(source, target, pages=1, pause=0.02)
        during = len(writer.committed) - before
    restored = restore(target, tmp_path / "restored")
    assert during > 0, "the writer wrote nothing while the copy was made"
    assert copy.restarts > MAX_RESTARTS  # so the rest went in one step: it finished anyway
    assert copy.revision == head_revision() == restored.revision
    assert restored.integrity == "ok"
    assert len(restored.notices) >= before
    assert restored.notices == writer.committed[: len(restored.notices)]
    assert copy.size == target.stat().st_size
    assert not list(tmp_path.glob(".backup.db.*"))  # the temporary file is gone
