"""The import contracts of pyproject.toml hold, and a forbidden import breaks them.

`python3 dev.py test` runs `lint-imports` on the tree. Here it runs on a copy of the three
packages' Python files: unchanged, every contract is kept; with one forbidden import appended to
one module, the run fails and names the contracts that catch it. lint-imports puts its working
directory first on sys.path, so it reads the copy, not the installed packages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "handlers", "storage")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACTS = {
    contract["id"]: contract["name"]
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
}


def copy_tree(target: Path) -> Path:
    """The three packages' .py files and pyproject.toml, copied under target."""
    for package in PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            copy = target / source.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
    shutil.copyfile(ROOT / "pyproject.toml", target / "pyproject.toml")
    return target


def lint_imports(tree: Path) -> tuple[int, set[str], str]:
    """(exit status, ids of the broken contracts, output) of lint-imports run in tree."""
    # Wide enough that no contract's summary line wraps.
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    broken = {id_ for id_, name in CONTRACTS.items() if f"{name} BROKEN" in output}
    kept = {id_ for id_, name in CONTRACTS.items() if f"{name} KEPT" in output}
    assert broken | kept == set(CONTRACTS), output  # every contract was checked and reported
    return done.returncode, broken, output


def test_the_tree_keeps_every_contract(tmp_path: Path) -> None:
    status, broken, output = lint_imports(copy_tree(tmp_path))
    assert (status, broken) == (0, set()), output


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # bot.topics imports bot.domain, so the pure core as a whole now reaches SQLAlchemy.
        ("bot/domain.py", "import sqlalchemy", {"domain-pure", "topics-pure"}),
        ("bot/domain.py", "from bot.topics import catalog", {"domain-pure", "layers"}),
        ("bot/topics/momentum.py", "import matplotlib.pyplot", {"topics-pure"}),
        # The handler imports telegram directly, so both contracts catch it.
        ("handlers/text.py", "import telegram", {"handlers-platform-neutral", "sdks-in-adapters"}),
        # An adapter: its SDK is reached only indirectly, which protected contracts allow.
        (
            "handlers/text.py",
            "from bot.adapters.slack import messenger",
            {"handlers-platform-neutral", "layers"},
        ),
        # /ask's language model is an edge (it speaks HTTP): the handler gets it through
        # the Context as a `bot.ports.AnswerWriter`, never by importing the adapter.
        (
            "handlers/ask_llm.py",
            "from bot.adapters import llm",
            {"handlers-platform-neutral", "layers"},
        ),
        # The services reach storage only through the composition root, so only these two.
        ("storage/models.py", "from handlers import base", {"storage-below-handlers", "layers"}),
        ("handlers/text.py", "from storage.uow import UnitOfWork", {"handlers-use-ports"}),
        # A service typed against the concrete unit of work rather than the port.
        ("bot/services/spikes.py", "from storage.uow import UnitOfWork", {"services-use-ports"}),
        # Even for type checkers only: import-linter reads the import all the same.
        (
            "bot/services/deliver.py",
            "import typing\nif typing.TYPE_CHECKING:\n    from storage import outbox",
            {"services-use-ports"},
        ),
        # Through a module the services import, the service is caught all the same.
        ("bot/metrics.py", "from storage import papers", {"services-use-ports"}),
        ("bot/config.py", "import slack_bolt", {"sdks-in-adapters"}),
        ("bot/config.py", "import httpx", {"http-in-arxiv-and-adapters"}),
        # Storage reaching up into a service: only the layers say no.
        ("storage/outbox.py", "from bot.services import ingest", {"layers"}),
        # bot.arxiv and storage are independent siblings in the layers as well; and the
        # services, which use bot.arxiv, would reach storage through it.
        (
            "bot/arxiv/parse.py",
            "from storage import papers",
            {"arxiv-below-storage", "layers", "services-use-ports"},
        ),
        ("bot/services/poll.py", "from handlers import base", {"services-below-edges", "layers"}),
        # A handler reaching into a service: the layers say no.
        ("handlers/settings.py", "from bot.services import digests", {"layers"}),
        # The composition root builds storage: a service importing it reaches storage too.
        (
            "bot/services/spikes.py",
            "from bot import app",
            {"services-below-edges", "layers", "services-use-ports"},
        ),
        ("storage/papers.py", "from tests.support import uow", {"product-not-dev"}),
        ("bot/cli.py", "import bench.harness", {"product-not-dev"}),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, line: str, broken: set[str]
) -> None:
    tree = copy_tree(tmp_path)
    with (tree / module).open("a") as source:
        source.write(f"\n{line}\n")
    status, found, output = lint_imports(tree)
    assert status == 1, output
    assert found == broken, output
