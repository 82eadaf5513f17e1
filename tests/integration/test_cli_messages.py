"""What the `paperwatch` command says when it is used wrongly: one line in the command line's
own words, saying what to do (issue 17's rough edges). Run in-process: `bot.cli.main`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.cli import main
from bot.topics.catalog import load_catalog


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(("PAPERWATCH_", "TELEGRAM_", "SLACK_", "ARXIV_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no stray .env; the SQLite file lands here
    monkeypatch.setenv("PAPERWATCH_LOG_LEVEL", "WARNING")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("paperwatch 0.")


def test_days_that_are_not_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["backfill", "--days", "abc"])
    err = capsys.readouterr().err
    assert "'abc' is not a number of days" in err and "--days 7" in err
    assert "_days" not in err


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("ARXIV_CATEGORIES", "cs.XX,foo", "'cs.XX' is not an arXiv category, e.g. cs.AI"),
        ("ARXIV_CATEGORIES", "cs.LGG", "did you mean cs.LG?"),
        ("PAPERWATCH_LOG_LEVEL", "LOUD", "unknown log level 'LOUD'"),
        ("PAPERWATCH_LOG_FORMAT", "xml", "unknown log format 'xml'; use text or json."),
    ],
)
def test_a_bad_setting_is_one_plain_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    value: str,
    expected: str,
) -> None:
    monkeypatch.setenv(name, value)
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"paperwatch: bad setting {name}: ")
    assert expected in err and "Value error" not in err
    assert err.rstrip().endswith((".", "?"))


def test_topics_takes_words_like_the_chat(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topics", "agents"]) == 0
    out = capsys.readouterr().out
    assert "LLM Agents [llm-agents]" in out
    assert "Diffusion Models [" not in out
    assert out.rstrip().endswith('topics matching "agents"')
    assert main(["topics", "zzqqxx"]) == 1
    assert 'no topic matches "zzqqxx"' in capsys.readouterr().out


def test_momentum_of_an_unknown_topic_answers_as_a_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["momentum", "Nonexistent"]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith('paperwatch: I don\'t know a topic called "Nonexistent".')
    assert "paperwatch topics WORDS" in captured.err
    assert "Nothing was changed" not in captured.out + captured.err
    assert main(["momentum", "difusion"]) == 1
    assert "did you mean: " in capsys.readouterr().err  # typo: the nearest topics


@pytest.mark.parametrize("role", ["worker", "poller"])
def test_a_worker_or_poller_without_a_chat_platform_refuses_to_start(
    capsys: pytest.CaptureFixture[str], role: str
) -> None:
    assert main(["run", "--role", role]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"a {role} process serves Telegram or Slack" in err and "TELEGRAM_BOT_TOKEN" in err
    assert not Path("paperwatch.db").exists()  # refused before the database was opened


FULL_FEED = (
    Path(__file__).parents[1] / "fixtures/arxiv/rss/jmmeus_aioarxiv_2024-11-28/rss_mock_feed.xml"
)


def test_ingest_from_a_file_keeps_to_arxiv_categories(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 2024-11-28 feed is all of arXiv: its math.PR "Drawdowns of diffusions" once
    arrived tagged Diffusion Models. Only the configured categories are stored."""
    import sqlite3

    monkeypatch.setenv("ARXIV_CATEGORIES", "cs.LG,stat")  # a category and a whole archive
    assert main(["ingest", "--file", str(FULL_FEED)]) == 0
    assert "outside ARXIV_CATEGORIES left out" in capsys.readouterr().out
    with sqlite3.connect("paperwatch.db") as db:
        titles = {t for (t,) in db.execute("SELECT title FROM papers")}
        categories = [c for (c,) in db.execute("SELECT categories FROM papers")]
    assert titles and "Drawdowns of diffusions" not in titles
    assert all("cs.LG" in c or "stat." in c for c in categories)


def test_paperwatch_catalog_is_used_and_checked_at_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    own = tmp_path / "own.toml"
    own.write_text(
        'extends = "bundled"\n[[topic]]\nname = "Bananas in ML"\nrule = "banana*"\n', "utf-8"
    )
    monkeypatch.setenv("PAPERWATCH_CATALOG", str(own))
    assert main(["topics", "bananas"]) == 0
    assert "Bananas in ML [bananas-in-ml]" in capsys.readouterr().out
    assert main(["topics", "--check"]) == 0
    assert f"catalog OK: {len(load_catalog()) + 1} topics" in capsys.readouterr().out

    own.write_text('extends = "bundled"\n[[topic]]\nname = "Bananas in ML"\nrule = "("\n', "utf-8")
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("paperwatch: the topic catalog is broken:") and "Bananas in ML" in err
    assert not Path("paperwatch.db").exists()  # refused before the database was opened


def test_offline_ingest_at_the_default_log_level_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    """No duplicate: the poll records its failure and the command reports it, once; a
    one-shot command logs only warnings unless PAPERWATCH_LOG_LEVEL is set."""
    monkeypatch.delenv("PAPERWATCH_LOG_LEVEL")
    monkeypatch.setenv("ARXIV_RSS_URL", f"http://127.0.0.1:{closed_port}/rss/")
    monkeypatch.setenv("ARXIV_MIN_REQUEST_INTERVAL", "0")
    assert main(["ingest"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("paperwatch: arXiv poll failed: cannot reach arXiv at 127.0.0.1")
    assert line.endswith("ARXIV_RSS_URL")
