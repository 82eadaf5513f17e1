"""The composition root closes what it opened, in reverse, when start-up fails half-way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot import app
from bot.config import Settings, StartupError
from storage.database import Database


class FakeAdapter:
    """Records its start and stop; `fail` makes its start refuse half-way."""

    def __init__(self, name: str, events: list[str], *, fail: bool = False) -> None:
        self.name = name
        self.events = events
        self.fail = fail
        self.messenger: Any = object()

    async def start(self, *, receive_updates: bool = True) -> None:
        self.events.append(f"start {self.name}")
        if self.fail:
            raise StartupError(f"{self.name} refused the token")

    async def stop(self) -> None:
        self.events.append(f"stop {self.name}")


async def test_a_failed_start_closes_exactly_what_was_opened_in_reverse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    adapters = {
        "one": FakeAdapter("one", events),
        "two": FakeAdapter("two", events, fail=True),
    }
    monkeypatch.setattr(app, "build_adapters", lambda settings, ctx: adapters)
    monkeypatch.setattr(app, "running", lambda scheduler: pytest.fail("scheduler started"))
    dispose = Database.dispose

    async def recorded_dispose(self: Database) -> None:
        events.append("dispose database")
        await dispose(self)

    monkeypatch.setattr(Database, "dispose", recorded_dispose)
    settings = Settings(
        PAPERWATCH_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'pw.db'}",
        TELEGRAM_BOT_TOKEN="123456:unused",  # the adapters above stand in for the platforms
    )

    with pytest.raises(StartupError, match=r"^two refused the token$"):
        await app.run_bot(settings, role="worker")

    assert events == ["start one", "start two", "stop two", "stop one", "dispose database"]
