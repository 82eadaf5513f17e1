"""/ask with the optional language model, against a fake OpenAI-compatible server on
127.0.0.1: the answer cites the retrieved papers and nothing else; a model that times out,
fails or returns nonsense, or a spent budget, gives the extractive answer and one line why;
without the settings nothing changes and no request leaves; the key never reaches a log."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime

import pytest
from pydantic import ValidationError

from bot.adapters.llm import MAX_BODY_BYTES, answer_writer, completions_url
from bot.app import command_context
from bot.config import Settings, StartupError
from bot.domain import ChatRef, Paper, Platform, Reply, Role
from bot.ports import BudgetExhausted, WriterTimeout, WriterUnavailable
from bot.topics.catalog import Catalog
from handlers.ask_llm import CITED_NOTHING
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from tests.support.llm_server import FakeLlm, serving_llm
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 3, 4, 23, 30, tzinfo=UTC)
DAY = date(2026, 3, 4)
KEY = "sk-test-very-secret-key-4242"
CHAT = ChatRef(Platform.TELEGRAM, "778")
WEB = Paper(
    "2603.00012",
    "Web Agents that Remember",
    "Browsing agents forget what they saw on earlier pages. We give a web agent an episodic "
    "memory of visited pages, retrieved when it plans its next click. On WebArena the memory "
    "improves task success by 9%.",
    announced=date(2026, 3, 3),
)
SHAPED = Paper(
    "2603.00014v2",
    "<b>Rewards</b> & R&D: $\\alpha$-shaped rewards for web agents",
    "Shaped rewards for web agents speed up their training; we reward each page visited "
    "that brings the agent closer to the goal. Episodic memory helps web agents too.",
    announced=date(2026, 3, 3),
)
FOLD = Paper(
    "2603.00013",
    "Protein Folding with Diffusion",
    "We predict protein structures with a diffusion model over backbone frames.",
    announced=date(2026, 3, 1),
)
QUESTION = "/ask how do web agents remember earlier pages?"


@pytest.fixture
def fake() -> FakeDatabase:
    fake = FakeDatabase()
    fake.seed_papers(WEB, SHAPED, FOLD)
    return fake


@pytest.fixture
def llm() -> Iterator[FakeLlm]:
    with serving_llm() as server:
        yield server


def settings_for(llm: FakeLlm, **more: object) -> Settings:
    given: dict[str, object] = {
        "PAPERWATCH_LLM_URL": llm.url,
        "PAPERWATCH_LLM_API_KEY": KEY,
        "PAPERWATCH_LLM_MODEL": "fake-model",
        "PAPERWATCH_LLM_TIMEOUT": 1.0,
        **more,
    }
    return Settings(_env_file=None, **given)  # type: ignore[call-arg]


async def context(settings: Settings, fake: FakeDatabase, catalog: Catalog) -> AsyncIterator:
    async with answer_writer(settings) as writer:
        ctx = command_context(settings, fake, catalog, writer)  # type: ignore[arg-type]
        yield Context(**{**vars(ctx), "clock": lambda: NOW, "rate_limit": None})


@pytest.fixture
async def ctx(llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog) -> AsyncIterator[Context]:
    async for made in context(settings_for(llm), fake, small_catalog):
        yield made


async def say(ctx: Context, line: str = QUESTION) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


async def extractive(fake: FakeDatabase, catalog: Catalog, line: str = QUESTION) -> Reply:
    return await say(Context(uow=fake.uow, catalog=catalog, clock=lambda: NOW), line)


async def spent(fake: FakeDatabase) -> int:
    async with fake.uow() as uow:
        return await uow.llm_budget.used(DAY)


async def test_the_model_answers_from_numbered_passages_citing_them(
    ctx: Context, llm: FakeLlm, fake: FakeDatabase
) -> None:
    llm.answer("Web agents keep an episodic memory of visited pages [1].", total_tokens=321)
    reply = await say(ctx)
    (request,) = llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "fake-model"
    prompt = request.user_message
    assert prompt.startswith("Passages:\n[1] Web Agents that Remember. Browsing agents")
    assert "Question: how do web agents remember earlier pages?" in prompt
    assert "Protein Folding" not in prompt  # not retrieved: never shown to the model
    assert reply.lines == (
        "From 1 of the 3 papers stored, written by a language model:",
        "Web agents keep an episodic memory of visited pages [1].",
    )
    (source,) = reply.sections
    assert source.heading == "[1] Web Agents that Remember"
    assert source.lines == ("[arXiv:2603.00012] https://arxiv.org/abs/2603.00012",)
    assert await spent(fake) == 321  # settled with the model's own count


async def test_invented_citations_are_removed_before_sending(ctx: Context, llm: FakeLlm) -> None:
    llm.answer(
        "Agents remember pages [1, 9] and shaped rewards help (arXiv:2603.00014) [2]. "
        "Others use a world model [9] [arXiv:2401.99999] and https://arxiv.org/abs/2312.00001v3 "
        "or hep-th/9901001; see also [7-8]."
    )
    reply = await say(ctx)
    text = reply.lines[1]
    # The second sentence cited only papers never retrieved: its claim goes with them.
    assert text == "Agents remember pages [1] and shaped rewards help [2]."
    assert [s.heading.split("]")[0] for s in reply.sections] == ["[1", "[2"]
    assert reply.sections[1].lines == ("[arXiv:2603.00014v2] https://arxiv.org/abs/2603.00014v2",)
    assert "<b>" in reply.sections[1].heading  # plain text: the adapters escape it


async def test_an_answer_citing_nothing_retrieved_falls_back(
    ctx: Context, llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    llm.answer("See arXiv:2401.99999 [5] for the details.")
    reply = await say(ctx)
    words = await extractive(fake, small_catalog)
    assert reply.lines == (CITED_NOTHING, *words.lines)
    assert reply.sections == words.sections


async def test_a_model_that_does_not_answer_in_time_gives_the_abstracts(
    llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    llm.hang()
    async for ctx in context(settings_for(llm, PAPERWATCH_LLM_TIMEOUT=0.5), fake, small_catalog):
        started = time.monotonic()
        reply = await say(ctx)
        took = time.monotonic() - started
    assert took < 2.0
    assert len(llm.requests) == 1
    words = await extractive(fake, small_catalog)
    assert reply.lines == (WriterTimeout.reason, *words.lines)
    assert reply.lines[0] == (
        "The language model did not answer in time; here are the abstracts' own words."
    )
    assert reply.sections == words.sections
    assert await spent(fake) > 0  # the model may have spent them: the estimate stays counted


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, b'{"error": {"message": "overloaded"}}'),
        (401, b'{"error": "bad key"}'),
        (200, b"{not json"),
        (200, b'{"choices": []}'),
        (200, b'{"choices": [{"message": {"content": 42}}]}'),
        (200, b"[1, 2, 3]"),
        (200, b'{"choices": [{"message": {"content": "' + b"x" * MAX_BODY_BYTES + b'"}}]}'),
    ],
    ids=["500", "401", "not-json", "no-choices", "not-text", "a-list", "too-big"],
)
async def test_an_error_or_malformed_body_gives_the_abstracts(
    ctx: Context, llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog, status: int, body: bytes
) -> None:
    llm.fail(status, body)
    reply = await say(ctx)
    words = await extractive(fake, small_catalog)
    assert reply.lines == (WriterUnavailable.reason, *words.lines)
    assert reply.sections == words.sections
    assert await spent(fake) == 0  # a refused call spends nothing


async def test_an_unreachable_model_gives_the_abstracts(
    fake: FakeDatabase, small_catalog: Catalog, closed_port: int, llm: FakeLlm
) -> None:
    settings = settings_for(llm, PAPERWATCH_LLM_URL=f"http://127.0.0.1:{closed_port}/v1")
    async for ctx in context(settings, fake, small_catalog):
        reply = await say(ctx)
    assert reply.lines[0] == WriterUnavailable.reason
    assert reply.lines[1:] == (await extractive(fake, small_catalog)).lines
    assert await spent(fake) == 0


async def test_a_spent_budget_gives_the_abstracts_without_calling_the_model(
    llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    settings = settings_for(llm, PAPERWATCH_LLM_DAILY_TOKENS=5000)
    llm.answer("Episodic memory [1].", total_tokens=4600)
    async for ctx in context(settings, fake, small_catalog):
        first = await say(ctx)
        assert first.lines[0].endswith("written by a language model:")
        second = await say(ctx)  # 4,600 spent: the next estimate (~700) does not fit in 5,000
    assert len(llm.requests) == 1
    assert second.lines[0] == BudgetExhausted.reason
    assert await spent(fake) == 4600


async def test_a_reported_count_past_the_budget_spends_the_day_and_no_more(
    llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    llm.answer("Episodic memory [1].", total_tokens=10**15)  # a stored integer overflows
    async for ctx in context(settings_for(llm), fake, small_catalog):
        first = await say(ctx)
        second = await say(ctx)
    assert first.lines[0].endswith("written by a language model:")
    assert second.lines[0] == BudgetExhausted.reason
    assert await spent(fake) == 200_000


async def test_the_budget_is_per_utc_day(
    llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    async with fake.uow() as uow:
        assert await uow.llm_budget.reserve(date(2026, 3, 3), 5000, 5000)
        await uow.commit()
    settings = settings_for(llm, PAPERWATCH_LLM_DAILY_TOKENS=5000)
    llm.answer("Episodic memory [1].", total_tokens=700)
    async for ctx in context(settings, fake, small_catalog):
        reply = await say(ctx)
    assert reply.lines[0].endswith("written by a language model:")
    assert await spent(fake) == 700


@pytest.mark.parametrize(
    "given",
    [
        {},  # none of the three
        {"PAPERWATCH_LLM_DAILY_TOKENS": 0},  # all three, and a budget of nothing
    ],
)
async def test_without_the_settings_nothing_changes_and_no_request_leaves(
    llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog, given: dict[str, object]
) -> None:
    settings = settings_for(llm, **given) if given else Settings(_env_file=None)  # type: ignore[call-arg]
    async for ctx in context(settings, fake, small_catalog):
        assert ctx.answer_writer is None
        reply = await say(ctx)
        off_subject = await say(ctx, "/ask how long should sourdough bread proof?")
    assert reply == await extractive(fake, small_catalog)
    assert reply.lines[0] == "From 1 of the 3 papers stored:"
    assert off_subject.lines[0].startswith("None of the 3 papers stored since 2026-03-01 talks")
    assert llm.requests == []


# In other words than the papers': the floor finds nothing, though the search retrieves them.
PARAPHRASE = (
    "/ask which browsing systems recall pages they visited long before, across whole sessions?"
)


async def test_the_model_answers_what_the_floor_missed(
    ctx: Context, llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    """The extractive floor, which only counts shared words, says "None of the 3 papers"; the
    model reads the retrieved abstracts with the question and finds the answer in them."""
    words = await extractive(fake, small_catalog, PARAPHRASE)
    assert words.lines[0].startswith("None of the 3 papers stored since 2026-03-01 talks")
    llm.answer("A web agent keeps an episodic memory of the pages it visited [1].")
    reply = await say(ctx, PARAPHRASE)
    (request,) = llm.requests
    assert request.user_message.startswith("Passages:\n[1] Web Agents that Remember.")
    assert reply.lines == (
        "From 1 of the 3 papers stored, written by a language model:",
        "A web agent keeps an episodic memory of the pages it visited [1].",
    )
    assert [section.heading for section in reply.sections] == ["[1] Web Agents that Remember"]


async def test_a_model_that_finds_no_answer_leaves_the_plain_not_found(
    ctx: Context, llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    """The model agrees with the floor (it cites nothing): the reply is the extractive one, as
    it is, without the note about an answer that cited nothing."""
    llm.answer("The passages do not say how browsing systems recall pages across sessions.")
    reply = await say(ctx, PARAPHRASE)
    assert len(llm.requests) == 1
    assert reply == await extractive(fake, small_catalog, PARAPHRASE)


async def test_a_model_that_cannot_answer_leaves_the_plain_not_found(
    llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    """No abstract passed the floor, so "here are the abstracts' own words" would be untrue:
    a model that times out leaves the extractive "None of the 3 papers" reply as it is."""
    llm.hang()
    async for ctx in context(settings_for(llm, PAPERWATCH_LLM_TIMEOUT=0.5), fake, small_catalog):
        reply = await say(ctx, PARAPHRASE)
    assert len(llm.requests) == 1
    assert reply == await extractive(fake, small_catalog, PARAPHRASE)


async def test_an_off_subject_question_does_not_call_the_model(ctx: Context, llm: FakeLlm) -> None:
    reply = await say(ctx, "/ask how long should sourdough bread proof?")
    assert reply.lines[0].startswith("None of the 3 papers stored since 2026-03-01 talks")
    assert llm.requests == []


@pytest.mark.parametrize(
    "given",
    [
        {"PAPERWATCH_LLM_URL": "http://127.0.0.1:9/v1"},
        {"PAPERWATCH_LLM_URL": "http://127.0.0.1:9/v1", "PAPERWATCH_LLM_MODEL": "m"},
        {"PAPERWATCH_LLM_API_KEY": KEY, "PAPERWATCH_LLM_MODEL": "m", "PAPERWATCH_LLM_URL": " "},
    ],
)
async def test_a_partial_configuration_stops_the_start_in_one_line(
    given: dict[str, object],
) -> None:
    settings = Settings(_env_file=None, **given)  # type: ignore[call-arg]
    with pytest.raises(StartupError) as stopped:
        async with answer_writer(settings):
            pass
    message = str(stopped.value)
    assert "\n" not in message
    assert "needs PAPERWATCH_LLM_" in message
    assert KEY not in message


def test_the_url_is_a_base_or_the_whole_endpoint() -> None:
    assert completions_url("http://h:8080/v1") == "http://h:8080/v1/chat/completions"
    assert completions_url("http://h/v1/") == "http://h/v1/chat/completions"
    assert completions_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


async def test_the_api_key_never_reaches_a_log(
    llm: FakeLlm, fake: FakeDatabase, small_catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = settings_for(llm, PAPERWATCH_LLM_TIMEOUT=0.3)
    assert KEY in settings.secret_values()  # and so redacted by bot.log_secrets too
    async for ctx in context(settings, fake, small_catalog):
        llm.answer("Memory [1].")
        await say(ctx)
        llm.fail(500, KEY.encode())
        await say(ctx)
        llm.hang()
        await say(ctx)
    assert caplog.records
    assert KEY not in caplog.text
    assert KEY not in repr(settings)


@pytest.mark.parametrize("url", ["localhost:8080/v1", "ftp://host/v1", "https://", "file:///x"])
def test_a_url_that_is_not_http_is_refused_at_start(url: str) -> None:
    with pytest.raises(ValidationError, match="PAPERWATCH_LLM_URL must be an http"):
        Settings(_env_file=None, PAPERWATCH_LLM_URL=url)  # type: ignore[call-arg]
