"""The held-out split's discipline: frozen files, and a record of every consultation.

- FROZEN.json holds the sha256 of holdout.jsonl.gz and of every held-out label and pool
  file, written once by `python -m bench.relevance --freeze` when labelling is finished. A run
  with `--holdout` whose files differ (changed, added or removed) refuses to compute.
- HOLDOUT_LOG.md gets one line per `--holdout` run: UTC time, commit, sha256 of the
  catalog measured, macro-F1 and the number of topics. Held-out figures are computed
  only then, so the log is the count of how often the held-out split was looked at.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from bench.fixtures import ROOT
from bench.relevance_catalog import CATALOG_DIR

FROZEN = CATALOG_DIR / "FROZEN.json"
HOLDOUT_LOG = CATALOG_DIR / "HOLDOUT_LOG.md"
LOG_HEADER = """# Held-out consultations

One line per `python -m bench.relevance --holdout` run, appended by the bench itself
(see README.md).

| UTC time | commit | sha256 of bot/topics/catalog.toml | macro-F1 | topics |
| --- | --- | --- | --- | --- |
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def held_out_files(root: Path | None = None) -> dict[str, str]:
    """Path (relative to the catalog folder) -> sha256 of every file the held-out
    figures are computed from: the papers, and each held-out label and pool file."""
    root = root or CATALOG_DIR
    paths = [root / "holdout.jsonl.gz"]
    paths += sorted((root / "labels" / "holdout").glob("*.jsonl"))
    paths += sorted((root / "pools" / "holdout").glob("*.json"))
    return {path.relative_to(root).as_posix(): sha256(path) for path in paths if path.exists()}


def frozen_differences(root: Path | None = None, frozen: Path | None = None) -> list[str] | None:
    """What differs from FROZEN.json (empty: nothing), or None when nothing is frozen yet."""
    frozen = frozen or FROZEN
    if not frozen.exists():
        return None
    recorded = json.loads(frozen.read_text(encoding="utf-8"))["files"]
    now = held_out_files(root)
    changes = [f"changed: {p}" for p in sorted(recorded) if p in now and now[p] != recorded[p]]
    changes += [f"missing: {p}" for p in sorted(set(recorded) - set(now))]
    changes += [f"not frozen: {p}" for p in sorted(set(now) - set(recorded))]
    return changes


def freeze(root: Path | None = None, frozen: Path | None = None, force: bool = False) -> list[str]:
    """Write FROZEN.json; refuses (returning the differences) to overwrite a different one
    unless `force`. A record that already matches the files is left as it is."""
    frozen = frozen or FROZEN
    differences = frozen_differences(root, frozen)
    if differences == [] or (differences and not force):
        return differences
    record = {
        "about": "sha256 of the held-out files, frozen when labelling was finished",
        "frozen_at": _now(),
        "commit": commit(),
        "files": held_out_files(root),
    }
    frozen.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return []


def commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def log_consultation(
    catalog_sha256: str, macro: float | None, topics: int, log: Path | None = None
) -> str:
    """Append one line to the held-out log (created with its header if missing)."""
    log = log or HOLDOUT_LOG
    if not log.exists():
        log.write_text(LOG_HEADER, encoding="utf-8")
    shown = "n/a" if macro is None else f"{macro:.4f}"
    line = f"| {_now()} | {commit()} | {catalog_sha256} | {shown} | {topics} |\n"
    with log.open("a", encoding="utf-8") as f:
        f.write(line)
    return line
