"""/why explains the second stage's decisions, on a real database: the verdict stored with a
kept tag, and the refusal of a tag whose rule matched (bot/topics/second_stage.py)."""

from __future__ import annotations

import pytest

from bench.relevance_catalog import load_split
from bot.domain import ChatRef, Platform, Role
from bot.services.ingest import store_papers
from bot.topics import tag_rules
from bot.topics.catalog import load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from storage.database import Database
from tests.support.second_stage import OFF_TOPIC, ON_TOPIC, trained_stage


async def test_why_shows_the_stage_for_a_kept_and_a_dropped_tag(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tag_rules, "bundled_stage", trained_stage)
    catalog = load_catalog()
    papers = load_split("dev")
    await store_papers(db.uow, [papers[OFF_TOPIC], papers[ON_TOPIC]], catalog)
    ctx = Context(uow=db.uow, catalog=catalog)

    async def why(arxiv_id: str) -> str:
        command = parse_command(
            f"/why {arxiv_id}", ChatRef(Platform.TELEGRAM, "77"), role=Role.OWNER
        )
        assert command is not None
        reply = await REGISTRY.dispatch(command, ctx)
        return "\n".join(line for s in reply.sections for line in s.lines)

    kept = await why(ON_TOPIC)
    assert "• Hallucination: " in kept and "stage " in kept and " ≥ " in kept and "for: " in kept
    dropped = await why(OFF_TOPIC)
    assert "• not Hallucination: its rule matches, but stage " in dropped and " < " in dropped
    assert "• Hallucination: " not in dropped
