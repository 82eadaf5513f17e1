"""bench/ and scripts/ are packages whose programs run as modules from the repository root
(`python -m bench.bench_ingest`): each imports as a module of its package, none edits
sys.path to find the product or the test support, and bot/ never imports them."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    f"{path.parent.name}.{path.stem}"
    for folder in ("bench", "scripts")
    for path in (ROOT / folder).glob("*.py")
    if path.stem != "__init__"
)


def _source(module: str) -> str:
    return (ROOT / Path(*module.split("."))).with_suffix(".py").read_text(encoding="utf-8")


@pytest.mark.parametrize("module", PROGRAMS)
def test_each_program_imports_as_a_module_of_its_package(module):
    assert importlib.import_module(module).__name__ == module


@pytest.mark.parametrize("module", PROGRAMS)
def test_no_program_edits_sys_path(module):
    assert "sys.path" not in _source(module)


def test_the_product_never_imports_bench_or_scripts():
    found = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for folder in ("bot", "handlers", "storage")
        for path in (ROOT / folder).rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"\s*(from|import)\s+(bench|scripts)\b", line)
    ]
    assert found == []


def test_a_bench_runs_with_python_m_from_the_repository_root():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_ingest", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
