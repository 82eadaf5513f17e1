#!/usr/bin/env python3
"""Set up a virtualenv and run paperwatch or its tests; needs only Python 3.11+.

    python3 dev.py run            # the bot, on the embedded default (terminal chat, SQLite)
    python3 dev.py test [ARGS]    # ruff, then the whole pytest suite (ARGS go to pytest)
    python3 dev.py paperwatch ARGS  # any paperwatch command inside the virtualenv

The virtualenv lives in .venv and is (re)installed from pyproject.toml when that changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".paperwatch-installed"


def ensure_venv() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may run on an older python3
        sys.exit(f"paperwatch needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not (BIN / "python").exists():
        print("Creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("Installing paperwatch and its test tools into .venv ...", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(wanted)


def run(*command: str) -> int:
    return subprocess.run(command, cwd=ROOT).returncode


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "test", "paperwatch"):
        print(__doc__)
        return 2
    ensure_venv()
    action, rest = argv[0], argv[1:]
    if action == "run":
        return run(str(BIN / "paperwatch"), "run", *rest)
    if action == "paperwatch":
        return run(str(BIN / "paperwatch"), *rest)
    lint = run(str(BIN / "ruff"), "check", ".")
    if lint != 0:
        print("ruff found problems (see above); fix them before the tests run.")
        return lint
    return run(str(BIN / "python"), "-m", "pytest", *rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
