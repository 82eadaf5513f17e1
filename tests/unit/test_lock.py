"""The hash-pinned requirement files agree with pyproject.toml, and dev.py installs from them.

requirements/lock.txt must pin every dependency that pyproject.toml declares (runtime, test and
dev extras) at a version its specifier admits, each with a sha256, so the two cannot drift
apart unnoticed; bootstrap.txt must pin pip and setuptools exactly as lock.txt does.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCKED_EXTRAS = ("test", "dev")


def parse_pins(path: Path) -> dict[str, tuple[Version, list[str]]]:
    """name -> (pinned version, sha256 hashes) for each entry of a pip requirements file."""
    logical_lines, current = [], ""
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        current += " " + line.removesuffix("\\")
        if not line.endswith("\\"):
            logical_lines.append(current.strip())
            current = ""
    pins = {}
    for line in filter(None, logical_lines):
        spec, *options = line.split()
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", spec)
        assert match, f"{path.name}: {spec!r} is not an exact name==version pin"
        hashes = [opt.removeprefix("--hash=sha256:") for opt in options]
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), f"{path.name}: {line!r}"
        pins[canonicalize_name(match.group(1))] = (Version(match.group(2)), hashes)
    return pins


LOCK = parse_pins(REQUIREMENTS / "lock.txt")
BOOTSTRAP = parse_pins(REQUIREMENTS / "bootstrap.txt")


def declared_requirements() -> list[Requirement]:
    """pyproject's runtime dependencies and those of the extras that the lock includes."""
    project = PYPROJECT["project"]
    specs = list(project["dependencies"])
    for extra in LOCKED_EXTRAS:
        specs += project["optional-dependencies"][extra]
    return [Requirement(spec) for spec in specs]


def bootstrap_requirements() -> list[Requirement]:
    lines = (REQUIREMENTS / "bootstrap.in").read_text().splitlines()
    return [Requirement(line.split("#", 1)[0]) for line in lines if line.split("#", 1)[0].strip()]


@pytest.mark.parametrize("requirement", declared_requirements(), ids=str)
def test_lock_pins_every_declared_dependency_within_its_range(requirement: Requirement) -> None:
    name = canonicalize_name(requirement.name)
    assert name in LOCK, f"{name} is in pyproject.toml but not in lock.txt: python3 dev.py lock"
    version, _ = LOCK[name]
    assert requirement.specifier.contains(version, prereleases=True), (
        f"lock.txt pins {name}=={version}, outside pyproject's {requirement.specifier}"
    )


def test_every_locked_package_has_a_hash() -> None:
    for pins in (LOCK, BOOTSTRAP):
        unhashed = [name for name, (_, hashes) in pins.items() if not hashes]
        assert not unhashed


def test_bootstrap_pins_pip_and_setuptools_as_the_lock_does() -> None:
    wanted = {canonicalize_name(req.name): req for req in bootstrap_requirements()}
    assert set(BOOTSTRAP) == set(wanted) == {"pip", "setuptools"}
    for name, requirement in wanted.items():
        assert BOOTSTRAP[name][0] == LOCK[name][0]
        assert requirement.specifier.contains(BOOTSTRAP[name][0])


def test_locked_setuptools_can_build_the_project() -> None:
    # dev.py builds the editable install without build isolation, with the locked setuptools.
    for spec in PYPROJECT["build-system"]["requires"]:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in BOOTSTRAP, f"build requirement {name} is not in bootstrap.txt"
        assert requirement.specifier.contains(BOOTSTRAP[name][0])


def test_a_requirements_file_without_hashes_is_refused(tmp_path: Path) -> None:
    unhashed = tmp_path / "lock.txt"
    unhashed.write_text("aiohttp==3.14.5\n")
    assert parse_pins(unhashed) == {"aiohttp": (Version("3.14.5"), [])}
    ranged = tmp_path / "ranged.txt"
    ranged.write_text("aiohttp>=3.9 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    with pytest.raises(AssertionError, match="not an exact"):
        parse_pins(ranged)


@pytest.fixture(scope="module")
def dev():
    spec = importlib.util.spec_from_file_location("paperwatch_dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dev_reinstalls_when_the_lock_changes(dev, tmp_path: Path) -> None:
    pyproject, lock = tmp_path / "pyproject.toml", tmp_path / "lock.txt"
    pyproject.write_text("[project]\n")
    lock.write_text("aiohttp==3.14.4\n")
    before = dev.install_fingerprint((pyproject, lock))
    lock.write_text("aiohttp==3.14.5\n")
    assert dev.install_fingerprint((pyproject, lock)) != before
    assert REQUIREMENTS / "lock.txt" in dev.INSTALL_INPUTS
    assert REQUIREMENTS / "bootstrap.txt" in dev.INSTALL_INPUTS


def test_dev_removes_what_the_lock_no_longer_lists(dev) -> None:
    locked = dev.locked_names(REQUIREMENTS / "bootstrap.txt", REQUIREMENTS / "lock.txt")
    assert {"pip", "setuptools", "aiohttp", "typing-extensions"} <= locked
    installed = ["aiohttp", "typing_extensions", "Six", "paperwatch", "pip"]
    assert dev.unlocked(installed, locked) == ["Six"]


def test_audit_fails_on_a_vulnerability_and_counts_skips_as_unaudited(dev) -> None:
    report = {
        "dependencies": [
            {
                "name": "aiohttp",
                "version": "3.9.0",
                "vulns": [
                    {
                        "id": "PYSEC-2024-26",
                        "aliases": ["CVE-2024-23829"],
                        "fix_versions": ["3.9.2"],
                    }
                ],
            },
            {"name": "idna", "version": "3.20", "vulns": []},
            {"name": "uv", "skip_reason": "Dependency not found on PyPI and could not be audited"},
        ]
    }
    vulnerable, skipped = dev.audit_findings(report)
    assert vulnerable == ["aiohttp 3.9.0: PYSEC-2024-26 (CVE-2024-23829); fixed in 3.9.2"]
    assert skipped == ["uv: Dependency not found on PyPI and could not be audited"]
    assert dev.audit_findings({"dependencies": [{"name": "idna", "vulns": []}]}) == ([], [])


def test_audit_exit_status(dev, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    outcomes = {
        "pypi": ([], ["aiohttp: not audited"], ""),
        "osv": ([], [], "ConnectionError: name resolution failed"),
    }
    monkeypatch.setattr(dev, "run_pip_audit", lambda service: outcomes[service])
    assert dev.audit(strict=False) == 0
    assert "did NOT run" in capsys.readouterr().out
    assert dev.audit(strict=True) == 1
    outcomes["osv"] = (["aiohttp 3.9.0: CVE-2024-23829; fixed in 3.9.2"], [], "")
    assert dev.audit(strict=False) == 1
    outcomes["pypi"] = ([], [], "")
    assert dev.audit(strict=True) == 0


def test_dev_runs_the_suite_on_two_workers_unless_told_otherwise(dev) -> None:
    assert dev.pytest_workers([]) == ["-n", "2", "--dist", "worksteal"]
    assert dev.pytest_workers(["tests/unit", "-k", "lock"]) == ["-n", "2", "--dist", "worksteal"]
    for chosen in (["-n", "4"], ["-n0"], ["--numprocesses=3"], ["-p", "no:xdist"]):
        assert dev.pytest_workers(chosen) == [], chosen
