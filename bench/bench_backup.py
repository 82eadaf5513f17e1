"""`paperwatch db backup` on a SQLite database a worker keeps writing to.

    .venv/bin/python -m bench.bench_backup [--papers 100000] [--seconds 3] [--pages N]

Builds a database of N papers (about 1.5 KB each), starts a worker thread that enqueues
one notice a transaction through the outbox, as fast as it can (its WAL checkpointed as
paperwatch's always is), measures its transactions for `--seconds` with no backup
running, then while `storage.backup.backup_sqlite` copies the database, in the same
process, with the command's defaults (or `--pages` a step; -1: all in one). Prints the
database's size, the backup's time and restarts, and the worker's transactions (count,
median, p99, max) in both windows; the last line is JSON with every figure. No goal: it
shows whether a backup holds a worker up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

from bench.harness import PAPER_COLUMNS, load_tables, migrate_to_head, paper_row
from storage.backup import PAGES_PER_STEP, PAUSE, backup_sqlite
from tests.support.live_writer import LiveWriter, restore

TITLE = " ".join(["backup"] * 140)  # about 1 KB a paper


def build(url: str, papers: int) -> None:
    asyncio.run(migrate_to_head(url))
    stored = datetime(2026, 12, 1, tzinfo=UTC)
    rows = (
        paper_row(n, f"2612.{n:06d}", f"{TITLE} {n}", "cs.LG", date(2026, 12, 1), stored)
        for n in range(1, papers + 1)
    )
    asyncio.run(load_tables(url, {"papers": (PAPER_COLUMNS, rows)}))


def window(commits: list[tuple[float, float]], start: float, end: float) -> dict[str, float]:
    """The worker's transactions that began between `start` and `end`."""
    took = sorted(s for began, s in commits if start <= began < end)
    if not took:
        return {"transactions": 0}
    return {
        "transactions": len(took),
        "median_ms": round(statistics.median(took) * 1000, 2),
        "p99_ms": round(took[min(len(took) - 1, int(len(took) * 0.99))] * 1000, 2),
        "max_ms": round(took[-1] * 1000, 2),
    }


def measure(folder: Path, papers: int, seconds: float, pages: int) -> dict[str, object]:
    source = folder / "paperwatch.db"
    url = f"sqlite+aiosqlite:///{source}"
    build(url, papers)
    size = source.stat().st_size
    with LiveWriter(url, keep_in_wal=False) as writer:
        quiet_start = time.perf_counter()
        time.sleep(seconds)
        backup_start = time.perf_counter()
        copy = backup_sqlite(source, folder / "backup.db", pages=pages)
        backup_end = time.perf_counter()
        before_end = len(writer.committed)
    restored = restore(copy.path, folder / "restored")
    return {
        "papers": papers,
        "database_mb": round(size / 1e6, 1),
        "pages_per_step": pages,
        "pause_s": PAUSE,
        "backup_s": round(backup_end - backup_start, 3),
        "restarts": copy.restarts,
        "copy_mb": round(copy.size / 1e6, 1),
        "copy_intact": restored.integrity == "ok"
        and restored.notices == writer.committed[: len(restored.notices)],
        "notices_in_copy": len(restored.notices),
        "notices_by_backup_end": before_end,
        "worker_without_backup": window(writer.commits, quiet_start, backup_start),
        "worker_during_backup": window(writer.commits, backup_start, backup_end),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument(
        "--pages", type=int, default=PAGES_PER_STEP, help="pages a step (-1: all in one)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pw_backup_") as folder:
        figures = measure(Path(folder), args.papers, args.seconds, args.pages)
    print(f"database:            {figures['database_mb']} MB ({args.papers:,} papers)")
    print(
        f"backup:              {figures['backup_s']} s, {figures['restarts']} restart(s), "
        f"{figures['pages_per_step']} pages a step, {figures['pause_s']} s pauses"
    )
    print(f"copy intact:         {figures['copy_intact']} ({figures['notices_in_copy']} notices)")
    for name in ("worker_without_backup", "worker_during_backup"):
        print(f"{name + ':':<21}{figures[name]}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
