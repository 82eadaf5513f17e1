"""Whether the database can serve this process: it answers, and its schema is at head.

What the ops endpoint's /readyz asks (`bot.ops`). A database that does not answer
within the timeout counts as down, so a probe never hangs on a dead server.
"""

from __future__ import annotations

import asyncio

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from storage.database import Database, alembic_config

READY_TIMEOUT = 3.0  # seconds for the whole check


class Readiness:
    """Asks the database of one process; the migrations' heads are read once."""

    def __init__(self, db: Database, *, seconds: float = READY_TIMEOUT) -> None:
        self._db = db
        self._seconds = seconds
        self.heads = frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())

    async def problem(self) -> str | None:
        """None when ready; otherwise why not, in one line."""
        try:
            async with asyncio.timeout(self._seconds), self._db.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
                current = await conn.run_sync(_current_heads)
        except TimeoutError:
            return f"the database did not answer within {self._seconds:g} s"
        except (OSError, SQLAlchemyError) as exc:
            return f"the database cannot be reached: {_first_line(exc)}"
        if current != self.heads:
            at = ", ".join(sorted(current)) or "an empty schema"
            return (
                f"the database schema is at {at}, not at head {', '.join(sorted(self.heads))}:"
                " run `paperwatch db upgrade`"
            )
        return None


def _current_heads(connection: Connection) -> frozenset[str]:
    return frozenset(MigrationContext.configure(connection).get_current_heads())


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
