"""The `paperwatch` command as a person runs it: real processes, real SQLite files."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.arxiv_server import Canned, serve_fake_arxiv
from tests.support.postgres import create_database, drop_database
from tests.support.slack_server import serve_fake_slack
from tests.support.telegram_server import serve_fake_telegram

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arxiv"
SMALL_RSS = FIXTURES / "rss" / "msudars_laya-reader" / "arxiv_rss.xml"


def paperwatch(
    *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))
    }
    environment.update({"PAPERWATCH_LOG_LEVEL": "WARNING", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=60,
    )


def test_help_lists_the_commands(tmp_path: Path) -> None:
    result = paperwatch("--help", cwd=tmp_path)
    assert result.returncode == 0
    for command in ("run", "console", "ingest", "db"):
        assert command in result.stdout


def test_scripted_console_on_the_embedded_default(tmp_path: Path) -> None:
    result = paperwatch(
        "console", cwd=tmp_path, stdin="/follow RL for LLM Agents\n/latest\n/list\n"
    )
    assert result.returncode == 0, result.stderr
    assert "Now following RL for LLM Agents" in result.stdout
    latest, _, listed = result.stdout.partition("You follow 1 topic:")
    assert latest.count("\n• ") == 5
    assert "• RL for LLM Agents" in listed
    assert (tmp_path / "paperwatch.db").exists()  # the default: a SQLite file in the cwd
    # A second session remembers the subscription.
    again = paperwatch("console", cwd=tmp_path, stdin="/list\n")
    assert "RL for LLM Agents" in again.stdout


def _clean_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))}
    return {**env, "PAPERWATCH_LOG_LEVEL": "WARNING", **extra}


def test_run_polls_on_start_while_the_chat_keeps_answering(tmp_path: Path) -> None:
    with serve_fake_arxiv() as fake:
        fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS.read_bytes()))
        env = _clean_env(
            {
                "ARXIV_RSS_URL": fake.url + "/rss/",
                "ARXIV_OAI_URL": fake.url + "/oai",
                "ARXIV_CATEGORIES": "cs.LG,cs.AI",
                "ARXIV_MIN_REQUEST_INTERVAL": "0",
            }
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "run"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=env,
        )
        try:
            process.stdin.write("/start\n")
            process.stdin.flush()
            deadline = time.monotonic() + 30
            while not fake.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # let the poll's transaction commit
            stdout, stderr = process.communicate("/status\n", timeout=60)
        finally:
            process.kill()
    assert process.returncode == 0, stderr
    assert [r.path for r in fake.requests][:1] == ["/rss/cs.LG+cs.AI"]
    assert "/follow RL for LLM Agents" in stdout  # /start answered
    assert "Last announcement stored: the listing of Thu 24 Sep 2026, 3 new paper(s)" in stdout


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite+aiosqlite:////no/such/folder/pw.db", "folder /no/such/folder does not exist"),
        ("sqlite+aiosqlite:////proc/pw.db", "cannot open database /proc/pw.db"),
        ("mysql://localhost/pw", "unsupported database"),
        ("not a url", "is not a database URL"),
    ],
)
def test_bad_database_is_one_clear_line(tmp_path: Path, url: str, message: str) -> None:
    result = paperwatch("console", cwd=tmp_path, env={"PAPERWATCH_DATABASE_URL": url})
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_setting_is_one_clear_line(tmp_path: Path) -> None:
    result = paperwatch("db", "current", cwd=tmp_path, env={"PAPERWATCH_LOG_LEVEL": "LOUD"})
    assert result.returncode == 2
    assert "PAPERWATCH_LOG_LEVEL" in result.stderr and "Traceback" not in result.stderr


def test_db_upgrade_then_current(tmp_path: Path) -> None:
    upgraded = paperwatch("db", "upgrade", cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    current = paperwatch("db", "current", cwd=tmp_path)
    from alembic.script import ScriptDirectory

    from storage.database import alembic_config

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert f"revision {head}" in current.stdout


def test_ingest_file_is_idempotent(tmp_path: Path) -> None:
    first = paperwatch("ingest", "--file", str(SMALL_RSS), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (
        "4 papers read; 3 new, 0 updated, 0 already stored,"
        " 1 older paper first seen in a new version (stored, not alerted)" in first.stdout
    )
    second = paperwatch("ingest", "--file", str(SMALL_RSS), cwd=tmp_path)
    assert "0 new, 0 updated, 4 already stored" in second.stdout


def test_ingest_of_a_broken_file_says_why(tmp_path: Path) -> None:
    page = tmp_path / "error.html"
    page.write_text("<html><body>Service Unavailable</body></html>")
    result = paperwatch("ingest", "--file", str(page), cwd=tmp_path)
    assert result.returncode == 2
    assert str(page) in result.stderr and "Traceback" not in result.stderr
    missing = paperwatch("ingest", "--file", str(tmp_path / "nope.xml"), cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_live_ingest_asks_for_the_configured_categories_in_one_request(tmp_path: Path) -> None:
    with serve_fake_arxiv() as fake:
        fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS.read_bytes()))
        env = {
            "ARXIV_RSS_URL": fake.url + "/rss/",
            "ARXIV_CATEGORIES": "cs.LG, cs.AI",
            "ARXIV_MIN_REQUEST_INTERVAL": "0",
        }
        result = paperwatch("ingest", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "3 new papers" in result.stdout
    assert [r.path for r in fake.requests] == ["/rss/cs.LG+cs.AI"]
    assert fake.requests[0].headers["User-Agent"].startswith("paperwatch/")


def test_live_ingest_failure_is_one_line(tmp_path: Path) -> None:
    with serve_fake_arxiv() as fake:
        # busy on every try; "Retry-After: 0" lets the retries go at once, politeness aside
        busy = Canned(b"busy", 503, headers={"Retry-After": "0"}, content_type="text/plain")
        fake.add("/rss/cs.AI", busy)
        env = {
            "ARXIV_RSS_URL": fake.url + "/rss/",
            "ARXIV_CATEGORIES": "cs.AI",
            "ARXIV_MIN_REQUEST_INTERVAL": "0",
        }
        result = paperwatch("ingest", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "HTTP 503" in result.stderr and "Traceback" not in result.stderr


def _oai_env(fake_url: str) -> dict[str, str]:
    return {
        "ARXIV_OAI_URL": fake_url + "/oai",
        "ARXIV_CATEGORIES": "nucl-th",
        "ARXIV_MIN_REQUEST_INTERVAL": "0",
    }


def test_backfill_shows_progress_and_resumes_after_an_interruption(tmp_path: Path) -> None:
    oai = FIXTURES / "oai_pmh" / "mikesaelim_arXivOAIHarvester"
    records = (oai / "ListRecordsResponse.xml").read_bytes()
    last_page = records.replace(
        b'<resumptionToken cursor="0" completeListSize="58011">726959|1001</resumptionToken>', b""
    )
    broken = (oai / "ErrorResponseBadArgument.xml").read_bytes()
    today = datetime.now(UTC).date()
    failing_day = (today - timedelta(days=1)).isoformat()

    with serve_fake_arxiv() as fake:
        fake.responder = lambda seen: Canned(
            broken if seen.query.get("from") == [failing_day] else last_page
        )
        first = paperwatch("backfill", "--days", "3", cwd=tmp_path, env=_oai_env(fake.url))
        fake.responder = lambda seen: Canned(last_page)
        fake.requests.clear()
        second = paperwatch("backfill", "--days", "3", cwd=tmp_path, env=_oai_env(fake.url))
    assert first.returncode == 2
    assert "backfill stopped (run it again to resume)" in first.stderr
    assert "badArgument" in first.stderr
    assert second.returncode == 0, second.stderr
    assert "Backfill" in second.stdout and "replacement" not in second.stderr
    # The second run starts at the day that failed, not at the beginning.
    assert sorted({r.query["from"][0] for r in fake.requests}) == [failing_day, today.isoformat()]


def test_status_command(tmp_path: Path) -> None:
    with serve_fake_arxiv() as fake:
        fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS.read_bytes()))
        env = {
            "ARXIV_RSS_URL": fake.url + "/rss/",
            "ARXIV_CATEGORIES": "cs.LG,cs.AI",
            "ARXIV_MIN_REQUEST_INTERVAL": "0",
        }
        paperwatch("ingest", cwd=tmp_path, env=env)
    result = paperwatch("status", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "Last announcement stored: the listing of Thu 24 Sep 2026, 3 new paper(s)" in result.stdout
    )
    assert "Next arXiv announcement expected" in result.stdout
    assert "Papers in the index: 4." in result.stdout
    assert "Outbox rows (one per chat and batch, digest or notice): none." in result.stdout
    assert "Processes running: none." in result.stdout


def test_tag_prints_one_json_line_per_paper_without_a_database(tmp_path: Path) -> None:
    papers = tmp_path / "papers.jsonl"
    papers.write_text(
        json.dumps(
            {
                "arxiv_id": "2607.17299",
                "title": "WAR: Workload-Aware Rollouts for Agentic Reinforcement Learning",
                "abstract": "We train LLM agents with reinforcement learning (GRPO) on multi-turn "
                "tool use in interactive environments.",
                "authors": ["A. Author"],
                "categories": ["cs.LG", "cs.AI"],
            }
        )
        + "\n\n"
    )
    result = paperwatch("tag", str(papers), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["arxiv_id"] for r in records] == ["2607.17299"]
    assert "RL for LLM Agents" in records[0]["tags"]
    assert records[0]["why"]["RL for LLM Agents"]
    assert not (tmp_path / "paperwatch.db").exists()

    feed = paperwatch("tag", str(SMALL_RSS), cwd=tmp_path)
    assert feed.returncode == 0 and len(feed.stdout.splitlines()) == 4


def test_tag_refuses_a_broken_file_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"arxiv_id": "1"}\n{not json\n')
    result = paperwatch("tag", str(bad), cwd=tmp_path)
    assert result.returncode == 2
    assert "line 2 is not a paper record" in result.stderr and "Traceback" not in result.stderr


def test_topics_lists_the_catalog(tmp_path: Path) -> None:
    result = paperwatch("topics", cwd=tmp_path)
    assert result.returncode == 0
    assert "RL for LLM Agents [rl-for-llm-agents]" in result.stdout
    count = int(result.stdout.strip().splitlines()[-1].split()[0])
    assert count >= 120


def test_retag_rebuilds_rule_tags(tmp_path: Path) -> None:
    paperwatch("ingest", "--file", str(SMALL_RSS), cwd=tmp_path)
    result = paperwatch("retag", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Retagged 4 papers with" in result.stdout


def test_momentum_in_the_terminal(tmp_path: Path) -> None:
    paperwatch("console", cwd=tmp_path, stdin="/start\n")  # loads the sample papers
    result = paperwatch("momentum", "RL", "for", "LLM", "Agents", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # The 30 sample papers are no history: no count, share or "(trending)" from them.
    assert result.stdout.startswith("paperwatch holds no papers from arXiv yet"), result.stdout
    assert "30 papers" not in result.stdout and "trending" not in result.stdout
    unknown = paperwatch("momentum", "quantum", "gravity", "of", "cats", cwd=tmp_path)
    assert unknown.returncode == 1 and "I don't know a topic" in unknown.stderr


def run_refused(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`paperwatch run` with credentials the platform refuses: it must stop at once."""
    result = paperwatch("run", cwd=tmp_path, env=env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    return result


def test_a_refused_telegram_token_stops_the_start_with_one_line(tmp_path: Path) -> None:
    token = "123456:refused-by-telegram"
    with serve_fake_telegram() as fake:
        fake.fail_next("getMe", 401, "Unauthorized")
        env = {"TELEGRAM_BOT_TOKEN": token, "TELEGRAM_API_BASE_URL": fake.base_url}
        result = run_refused(tmp_path, env)
    assert "paperwatch: Telegram refused TELEGRAM_BOT_TOKEN" in result.stderr
    assert "refused-by-telegram" not in result.stderr  # the token is a secret


@pytest.mark.parametrize(
    ("tokens", "said"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-wrong"}, "Slack refused SLACK_BOT_TOKEN (invalid_auth)"),
        # A bot token pasted as the app token: slack_sdk alone would retry it for ever.
        ({"SLACK_APP_TOKEN": "bot"}, "Slack refused SLACK_APP_TOKEN (not_allowed_token_type)"),
    ],
)
def test_refused_slack_tokens_stop_the_start_with_one_line(
    tmp_path: Path, tokens: dict[str, str], said: str
) -> None:
    with serve_fake_slack() as fake:
        env = {
            "SLACK_BOT_TOKEN": fake.bot_token,
            "SLACK_APP_TOKEN": fake.app_token,
            "SLACK_API_URL": fake.api_url,
        }
        env |= {k: fake.bot_token if v == "bot" else v for k, v in tokens.items()}
        result = run_refused(tmp_path, env)
    assert f"paperwatch: {said}" in result.stderr
    assert fake.bot_token not in result.stderr and "xoxb-wrong" not in result.stderr


def test_ingest_and_retag_skip_a_stored_query_that_does_not_compile(tmp_path: Path) -> None:
    """Issue 14, row 1: a followed query stored in a form that no longer parses (here the
    1,033-character canonical form of a 300-character `/follow`) stops neither."""
    import asyncio

    from bot.adapters.console import CONSOLE_CHAT
    from bot.domain import SubscriptionKind
    from storage.database import Database

    broken = " AND ".join(["abs:ssssssss"] * 39 + ["abs:ssssss"] * 25)
    assert len(broken) == 1033

    async def store_broken() -> None:
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'paperwatch.db'}")
        await db.upgrade()
        async with db.uow() as uow:
            chat = await uow.chats.get_or_create(CONSOLE_CHAT)
            await uow.subscriptions.add(chat.id, SubscriptionKind.QUERY, broken, "x", "q:x")
            await uow.commit()
        await db.dispose()

    asyncio.run(store_broken())
    feed = FIXTURES / "rss" / "jmmeus_aioarxiv_2024-11-28" / "rss_mock_feed.xml"
    ingest = paperwatch("ingest", "--file", str(feed), cwd=tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    assert "Traceback" not in ingest.stderr and "does not compile" in ingest.stderr
    assert " 0 new" not in ingest.stdout
    retag = paperwatch("retag", cwd=tmp_path)
    assert retag.returncode == 0, retag.stderr
    assert "Retagged" in retag.stdout


@pytest.fixture
def database_env(backend: str) -> Iterator[dict[str, str]]:
    """The environment for the embedded SQLite default ({}), or for a new PostgreSQL
    database through PAPERWATCH_DATABASE_URL."""
    if backend == "sqlite":
        yield {}
        return
    url = asyncio.run(create_database("pw_cli_ask"))
    try:
        yield {"PAPERWATCH_DATABASE_URL": url}
    finally:
        asyncio.run(drop_database(url))


def test_ask_in_the_terminal(tmp_path: Path, database_env: dict[str, str]) -> None:
    env = database_env
    paperwatch("console", cwd=tmp_path, stdin="/start\n", env=env)  # loads the sample papers
    question = "which rewards do web agents use?"
    answer = paperwatch("ask", question, "--topic", "RL for LLM Agents", cwd=tmp_path, env=env)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.startswith("From ") and "papers on RL for LLM Agents:" in answer.stdout
    assert "web agent" in answer.stdout.lower() and "[sample:" in answer.stdout
    assert answer.stderr == ""
    everywhere = paperwatch("ask", question, cwd=tmp_path, env=env)
    assert everywhere.returncode == 0 and "papers stored:" in everywhere.stdout
    nothing = paperwatch("ask", "how long should sourdough proof?", cwd=tmp_path, env=env)
    assert nothing.returncode == 0 and nothing.stdout.startswith("None of the 30 papers")
    for bad, said in (
        (("ask", "   "), "ask what?"),
        (("ask", "x" * 10_000), "too long"),
        (("ask", "rewards", "--topic", "quantum gravity of cats"), "I don't know a topic"),
    ):
        refused = paperwatch(*bad, cwd=tmp_path, env=env)
        assert refused.returncode == 2 and refused.stdout == ""
        assert said in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
