"""/ask with the language model on a real database (SQLite and PostgreSQL): retrieval from
the full-text index, the budget reserved and settled in `llm_budget`, a huge reported count
clamped to the day's budget so that the stored count cannot overflow."""

from __future__ import annotations

from datetime import UTC, date, datetime

from bot.adapters.llm import answer_writer
from bot.app import command_context
from bot.config import Settings
from bot.domain import ChatRef, Paper, Platform, Role
from bot.ports import BudgetExhausted
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from storage.database import Database
from tests.support.llm_server import serving_llm

NOW = datetime(2026, 3, 4, 12, tzinfo=UTC)
WEB = Paper(
    "2603.00012",
    "Web Agents that Remember",
    "Browsing agents forget what they saw on earlier pages. We give a web agent an episodic "
    "memory of visited pages, retrieved when it plans its next click.",
    announced=date(2026, 3, 3),
)


async def test_the_model_answers_and_the_budget_is_kept_in_the_database(
    db: Database, small_catalog: Catalog
) -> None:
    async with db.uow() as uow:
        await uow.papers.upsert([WEB])
        await uow.commit()
    command = parse_command(
        "/ask how do web agents remember pages?", ChatRef(Platform.SLACK, "C1"), role=Role.OWNER
    )
    assert command is not None
    with serving_llm() as llm:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            PAPERWATCH_LLM_URL=llm.url,
            PAPERWATCH_LLM_API_KEY="sk-storage-test-key",
            PAPERWATCH_LLM_MODEL="m",
            PAPERWATCH_LLM_DAILY_TOKENS=3000,
        )
        async with answer_writer(settings) as writer:
            made = command_context(settings, db, small_catalog, writer)
            ctx = Context(**{**vars(made), "clock": lambda: NOW, "rate_limit": None})
            llm.answer("An episodic memory of visited pages [1].", total_tokens=250)
            first = await REGISTRY.dispatch(command, ctx)
            llm.answer("Memory [1].", total_tokens=2**40)
            second = await REGISTRY.dispatch(command, ctx)
            third = await REGISTRY.dispatch(command, ctx)
    assert first.lines == (
        "From the one paper stored, written by a language model:",
        "An episodic memory of visited pages [1].",
    )
    assert second.lines[1] == "Memory [1]."
    assert third.lines[0] == BudgetExhausted.reason
    assert len(llm.requests) == 2
    async with db.uow() as uow:
        assert await uow.llm_budget.used(NOW.date()) == 3250  # 250, then the whole 3,000
