"""The shape the code keeps (issue 16's goals), checked so that it holds without discipline:
no product module over 350 lines, no function over 60, and no module name in two packages
unless the packages are parallel platforms (bot/adapters/<platform>/)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "handlers", "storage")
MAX_MODULE_LINES = 350
MAX_FUNCTION_LINES = 60
PLATFORMS = ROOT / "bot" / "adapters"


def modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_there_is_code_to_check() -> None:
    assert len(modules()) > 50


def test_no_module_is_over_350_lines() -> None:
    long = {}
    for path in modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            long[str(path.relative_to(ROOT))] = lines
    assert long == {}


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in modules():
        if "versions" in path.parts:  # migrations are history: written once, never edited
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = lines
    assert long == {}


def test_no_module_name_is_in_two_packages_unless_they_are_parallel_platforms() -> None:
    where: dict[str, set[Path]] = defaultdict(set)
    for path in modules():
        if path.stem == "__init__" or "migrations" in path.parts:
            continue
        package = path.parent
        if package.parent == PLATFORMS:  # telegram/render.py beside slack/render.py is fine
            package = PLATFORMS
        where[path.stem].add(package)
    repeated = {
        name: sorted(str(p.relative_to(ROOT)) for p in packages)
        for name, packages in where.items()
        if len(packages) > 1
    }
    assert repeated == {}
