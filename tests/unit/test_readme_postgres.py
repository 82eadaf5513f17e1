"""The README's PostgreSQL steps work as written: the role and database that the URL names are
the ones its commands create (a new user once followed `createdb paperwatch` and then a URL
with a role `paperwatch` that nothing had created)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from sqlalchemy.engine import make_url

README = Path(__file__).resolve().parents[2] / "README.md"


def postgres_block() -> list[list[str]]:
    """The shell commands of the first code block under "Running on PostgreSQL"."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Running on PostgreSQL", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the PostgreSQL section has no ```sh block"
    return [shlex.split(line, comments=True) for line in block.group(1).splitlines()]


def test_the_readme_creates_the_role_and_database_its_url_names() -> None:
    commands = [words for words in postgres_block() if words]
    exports = [w[1] for w in commands if w[0] == "export" and "DATABASE_URL=" in w[1]]
    assert exports, "no PAPERWATCH_DATABASE_URL export in the PostgreSQL steps"
    url = make_url(exports[0].split("=", 1)[1])
    assert url.drivername == "postgresql+asyncpg"

    created_roles = {w[-1] for w in commands if w[0] == "createuser"}
    created_dbs = {w[-1]: w for w in commands if w[0] == "createdb"}
    assert url.username in created_roles | {"postgres"}, (
        f"the URL connects as {url.username!r}, but the steps create {sorted(created_roles)}"
    )
    assert url.database in created_dbs, f"nothing creates the database {url.database!r}"
    createdb = created_dbs[url.database]
    if url.username != "postgres":  # the migrations create tables: the role must own the db
        assert "--owner" in createdb and createdb[createdb.index("--owner") + 1] == url.username
