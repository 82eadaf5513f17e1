"""The deployment files say what the code does (issue 18): no container runtime or systemd
runs here, so what can be checked without one is checked statically. The Dockerfile's command
is the console script with arguments its parser takes, its base image is pinned, its
HEALTHCHECK asks the ops endpoint's /healthz on the ops port; compose.yaml parses, uses only
documented variables, health-checks PostgreSQL and starts the bots after it; the systemd
units carry the hardening and run a command that exists."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.cli import build_parser
from bot.config import Settings
from bot.scheduler import ROLES

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"
UNITS = (ROOT / "deploy" / "paperwatch.service", ROOT / "deploy" / "paperwatch@.service")
HEALTH_PATH = "/healthz"


def console_scripts() -> set[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(pyproject["project"]["scripts"])


def assert_runs(argv: list[str]) -> None:
    """`argv` is a console script of the project with arguments its parser accepts."""
    assert argv[0] in console_scripts(), argv
    args = build_parser().parse_args(argv[1:])  # exits (a failure here) when it does not parse
    assert args.command == "run", argv


def documented() -> set[str]:
    """Every setting's variable, and the variables .env.example documents."""
    names = {str(f.validation_alias) for f in Settings.model_fields.values()}
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    return names | set(re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", example, re.MULTILINE))


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    lines = (line.strip() for line in text.splitlines())
    pairs = [line.split(None, 1) for line in lines if line and not line.startswith("#")]
    return [(p[0].upper(), p[1] if len(p) > 1 else "") for p in pairs]


def instructions(name: str) -> list[str]:
    return [args for instruction, args in dockerfile() if instruction == name]


def env_of_image() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in instructions("ENV"):
        env.update(re.findall(r"(\w+)=(\S+)", args))
    return env


def test_the_image_runs_paperwatch_as_an_unprivileged_user() -> None:
    (cmd,) = instructions("CMD")
    assert_runs(json.loads(cmd))
    assert not instructions("ENTRYPOINT")
    users = instructions("USER")
    assert users and users[-1] not in ("root", "0")


def test_the_base_image_is_pinned_and_the_build_has_stages() -> None:
    bases = [args.split()[0] for args in instructions("FROM")]
    assert len(bases) >= 2, "multi-stage: a build stage and the image that runs"
    for base in bases:
        image, _, tag = base.partition("@")[0].partition(":")
        assert image == "python" and re.fullmatch(r"3\.11\.\d+-slim-\w+", tag), base


def test_the_image_installs_the_hash_checked_lock_then_the_project_alone() -> None:
    runs = " ".join(instructions("RUN"))
    assert "--require-hashes -r requirements/lock.txt" in runs
    assert "--no-deps --no-build-isolation ." in runs


def test_the_sqlite_directory_is_a_volume_and_the_working_directory() -> None:
    workdir = instructions("WORKDIR")[-1]
    assert any(workdir in json.loads(v) for v in instructions("VOLUME"))


def test_the_healthcheck_asks_healthz_on_the_ops_port() -> None:
    (check,) = instructions("HEALTHCHECK")
    command = json.loads(check.split("CMD", 1)[1])
    assert f"'{HEALTH_PATH}'" in command[-1] and "PAPERWATCH_OPS_PORT" in command[-1]
    env = env_of_image()
    port = env["PAPERWATCH_OPS_PORT"]
    assert instructions("EXPOSE") == [port]
    assert {"PAPERWATCH_OPS_PORT", "PAPERWATCH_OPS_HOST"} <= documented()
    assert {name for name in env if name.startswith("PAPERWATCH_")} <= documented()


def test_the_health_path_is_one_the_ops_endpoint_serves() -> None:
    ops = ROOT / "bot" / "ops.py"
    if not ops.exists():
        pytest.skip("bot/ops.py (the ops endpoint) is not on this branch")
    assert HEALTH_PATH in re.findall(r'add_get\("([^"]+)"', ops.read_text(encoding="utf-8"))


def test_dockerignore_lets_in_every_copied_path() -> None:
    allowed = {
        line.removeprefix("!").rstrip("/")
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.startswith("!")
    }
    for args in instructions("COPY"):
        if args.startswith("--from"):
            continue
        for source in args.split()[:-1]:
            assert source.rstrip("/") in allowed, source


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def bots(compose: dict) -> dict[str, dict]:
    return {name: s for name, s in compose["services"].items() if name != "db"}


def test_compose_database_is_pinned_health_checked_and_on_a_named_volume(compose) -> None:
    db = compose["services"]["db"]
    image, _, tag = db["image"].partition(":")
    assert image == "postgres" and re.match(r"\d+\.\d+", tag), db["image"]
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    volume = db["volumes"][0].split(":")[0]
    assert volume in compose["volumes"]


def test_compose_runs_one_poller_and_one_worker_after_the_database(compose) -> None:
    roles = []
    for name, service in bots(compose).items():
        assert service["depends_on"] == {"db": {"condition": "service_healthy"}}, name
        assert_runs(service["command"])
        roles.append(service["command"][service["command"].index("--role") + 1])
        assert service["env_file"] == ".env"
        assert service["environment"]["PAPERWATCH_DATABASE_URL"].startswith("postgresql+asyncpg://")
    assert sorted(roles) == ["poller", "worker"]
    assert set(roles) <= set(ROLES)


def test_compose_publishes_each_ops_port_on_the_hosts_loopback(compose) -> None:
    for name, service in bots(compose).items():
        port = service["environment"]["PAPERWATCH_OPS_PORT"]
        assert port == env_of_image()["PAPERWATCH_OPS_PORT"], name  # what the healthcheck asks
        (published,) = service["ports"]
        host, _, container = published.rpartition(":")
        assert container == port and host.startswith("127.0.0.1:"), published


def test_compose_uses_only_documented_variables(compose) -> None:
    interpolated = set(re.findall(r"\$\{(\w+)", COMPOSE.read_text(encoding="utf-8")))
    assert interpolated == {"POSTGRES_PASSWORD"}
    assert interpolated <= documented()
    for name, service in bots(compose).items():
        assert set(service["environment"]) <= documented(), name


def unit(path: Path) -> dict[str, list[str]]:
    """The [Service] section: key -> every value given (keys may repeat)."""
    section, keys = "", {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            keys.setdefault(key, []).append(value)
    return keys


HARDENING = {
    "Type": "simple",
    "Restart": "on-failure",
    "NoNewPrivileges": "yes",
    "ProtectSystem": "strict",
    "ProtectHome": "yes",
    "PrivateTmp": "yes",
}


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.name)
def test_systemd_units_are_hardened_and_may_write_the_sqlite_directory(path: Path) -> None:
    keys = unit(path)
    for key, value in HARDENING.items():
        assert keys.get(key) == [value], key
    assert keys["User"][0] not in ("root", "0")
    assert keys["EnvironmentFile"][0].startswith("/etc/paperwatch/")
    (workdir,) = keys["WorkingDirectory"]  # where the SQLite file goes by default
    assert workdir in keys["ReadWritePaths"][0].split()


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.name)
def test_systemd_units_run_the_console_script(path: Path) -> None:
    (exec_start,) = unit(path)["ExecStart"]
    binary, *args = exec_start.split()
    assert binary.startswith("/") and binary.endswith("/bin/paperwatch")
    roles = ROLES if "%i" in args else ("",)
    for role in roles:
        assert_runs([Path(binary).name, *(a.replace("%i", role) for a in args)])
