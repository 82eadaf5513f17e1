"""Settings: names, defaults, parsing and secrecy."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from bot.config import DEFAULT_CATEGORIES, Settings, StartupError


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name in list(__import__("os").environ):
        if name.startswith(("PAPERWATCH_", "TELEGRAM_", "SLACK_", "ARXIV_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_defaults() -> None:
    settings = Settings()
    assert settings.database_url.startswith("sqlite+aiosqlite:///")
    assert settings.database_url.endswith("paperwatch.db")
    assert settings.arxiv_categories == DEFAULT_CATEGORIES
    assert settings.arxiv_min_request_interval == 3.0
    assert settings.arxiv_fast_poll_interval == 90.0
    assert settings.telegram_api_base_url == "https://api.telegram.org/bot"
    assert settings.slack_api_url == "https://slack.com/api/"
    assert not settings.telegram_enabled and not settings.slack_enabled


@pytest.mark.parametrize("raw", ["cs.AI,cs.LG", "cs.AI, cs.LG", "cs.AI+cs.LG", " cs.AI  cs.LG "])
def test_categories_are_split(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("ARXIV_CATEGORIES", raw)
    assert Settings().arxiv_categories == ("cs.AI", "cs.LG")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ARXIV_CATEGORIES", " , "),
        ("PAPERWATCH_LOG_LEVEL", "LOUD"),
        ("PAPERWATCH_LOG_FORMAT", "xml"),
        ("ARXIV_MIN_REQUEST_INTERVAL", "-1"),
        ("ARXIV_FAST_POLL_INTERVAL", "5"),
        ("ARXIV_FAST_POLL_INTERVAL", "-1"),
        ("TELEGRAM_WEBHOOK_PORT", "70000"),
    ],
)
def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match=name):
        Settings()


def test_dotenv_is_read(tmp_path) -> None:
    (tmp_path / ".env").write_text("TELEGRAM_BOT_TOKEN=123:abc\nPAPERWATCH_LOG_LEVEL=debug\n")
    settings = Settings()
    assert settings.telegram_enabled and settings.log_level == "DEBUG"


def test_tokens_never_show(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:VERY-SECRET")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-VERY-SECRET")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "VERY-SECRET-2")
    settings = Settings()
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("test").info("settings %s %r", settings, settings)
    assert "VERY-SECRET" not in caplog.text
    assert settings.slack_enabled
    assert settings.telegram_bot_token is not None
    assert settings.telegram_bot_token.get_secret_value() == "123456:VERY-SECRET"


@pytest.mark.parametrize(
    "name",
    [
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_WEBHOOK_URL",
        "TELEGRAM_WEBHOOK_SECRET",
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET",
    ],
)
@pytest.mark.parametrize("blank", ["", "  "])
def test_an_empty_secret_is_unset(monkeypatch: pytest.MonkeyPatch, name: str, blank: str) -> None:
    monkeypatch.setenv(name, blank)
    settings = Settings()
    assert getattr(settings, name.lower()) is None
    assert settings.secret_values() == ()


def test_webhook_mode_without_its_secret_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.org/telegram")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "")
    with pytest.raises(StartupError, match="TELEGRAM_WEBHOOK_SECRET is not"):
        Settings().telegram_webhook_secret_value()
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "not allowed: spaces")
    with pytest.raises(ValidationError, match="TELEGRAM_WEBHOOK_SECRET"):
        Settings()


def test_slack_without_a_way_to_hear_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "")
    settings = Settings()
    assert settings.slack_enabled
    with pytest.raises(StartupError, match="SLACK_SIGNING_SECRET"):
        settings.slack_receive_mode()
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s3cret")
    assert Settings().slack_receive_mode() == "http"
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    assert Settings().slack_receive_mode() == "socket"


def test_categories_are_checked_against_arxivs_taxonomy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARXIV_CATEGORIES", "cs.ai, STAT.ML, quant-ph, cond-mat.stat-mech")
    assert Settings().arxiv_categories == ("cs.AI", "stat.ML", "quant-ph", "cond-mat.stat-mech")
    monkeypatch.setenv("ARXIV_CATEGORIES", "cs.AI,cs.XX")
    with pytest.raises(ValidationError, match=r"'cs\.XX' is not an arXiv category"):
        Settings()
    monkeypatch.setenv("ARXIV_CATEGORIES", "cs.LGG")
    with pytest.raises(ValidationError, match=r"did you mean cs\.LG"):
        Settings()


def test_legacy_archives_that_old_papers_carry_are_categories() -> None:
    from bot.arxiv.categories import canonical_category

    assert canonical_category("chao-dyn") == "chao-dyn"
    assert canonical_category("CMP-LG") == "cmp-lg"
    assert canonical_category("cs") == "cs"
    assert canonical_category("cs.XX") is None


def test_log_format_is_text_unless_json_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().log_format == "text"
    monkeypatch.setenv("PAPERWATCH_LOG_FORMAT", " JSON ")
    assert Settings().log_format == "json"
