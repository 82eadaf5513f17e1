"""Settings: the one place that reads the environment (and `.env`).

Build a `Settings` once in the composition root (`bot.cli`) and pass it down;
nothing else reads `os.environ`.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.arxiv.categories import check_categories

DEFAULT_CATEGORIES = (
    "cs.AI",
    "cs.CL",
    "cs.LG",
    "cs.IR",
    "cs.MA",
    "cs.CV",
    "cs.RO",
    "cs.SE",
    "stat.ML",
)


def default_database_url() -> str:
    """A SQLite file in the working directory, through the async driver."""
    return f"sqlite+aiosqlite:///{Path.cwd() / 'paperwatch.db'}"


LOG_FORMATS = ("text", "json")


class StartupError(RuntimeError):
    """Something a person must fix before paperwatch can start; one line, no traceback."""


# What Telegram accepts as a webhook's secret_token.
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
# The fastest ARXIV_FAST_POLL_INTERVAL accepted: a feed that changes once a day needs no more.
MIN_FAST_POLL_INTERVAL = 30.0


class Settings(BaseSettings):
    """Every knob of paperwatch. Names match `.env.example`."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
    )

    database_url: str = Field(
        default_factory=default_database_url, validation_alias="PAPERWATCH_DATABASE_URL"
    )
    log_level: str = Field(default="INFO", validation_alias="PAPERWATCH_LOG_LEVEL")
    # "text" (a line for a person) or "json" (one object a line, for a log collector).
    log_format: str = Field(default="text", validation_alias="PAPERWATCH_LOG_FORMAT")
    # A topic catalog of the deployment's own, instead of the bundled one, or added to it
    # when the file says `extends = "bundled"`; checked at start (bot.topics.catalog).
    catalog: Path | None = Field(default=None, validation_alias="PAPERWATCH_CATALOG")

    telegram_bot_token: SecretStr | None = Field(
        default=None, validation_alias="TELEGRAM_BOT_TOKEN"
    )
    telegram_api_base_url: str = Field(
        default="https://api.telegram.org/bot", validation_alias="TELEGRAM_API_BASE_URL"
    )
    # Webhook mode when a public URL is set; long polling otherwise.
    telegram_webhook_url: str | None = Field(default=None, validation_alias="TELEGRAM_WEBHOOK_URL")
    telegram_webhook_secret: SecretStr | None = Field(
        default=None, validation_alias="TELEGRAM_WEBHOOK_SECRET"
    )
    telegram_webhook_listen: str = Field(
        default="0.0.0.0", validation_alias="TELEGRAM_WEBHOOK_LISTEN"
    )
    telegram_webhook_port: int = Field(
        default=8443, ge=1, le=65535, validation_alias="TELEGRAM_WEBHOOK_PORT"
    )
    # Telegram's flood limits; lower them if you see 429s, raise them only for a local server.
    telegram_messages_per_second: float = Field(
        default=30.0, gt=0, validation_alias="TELEGRAM_MESSAGES_PER_SECOND"
    )
    telegram_chat_messages_per_second: float = Field(
        default=1.0, gt=0, validation_alias="TELEGRAM_CHAT_MESSAGES_PER_SECOND"
    )
    telegram_group_messages_per_minute: float = Field(
        default=20.0, gt=0, validation_alias="TELEGRAM_GROUP_MESSAGES_PER_MINUTE"
    )
    # In groups, only chat administrators may change subscriptions and settings.
    telegram_group_admins_only: bool = Field(
        default=True, validation_alias="TELEGRAM_GROUP_ADMINS_ONLY"
    )

    slack_bot_token: SecretStr | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    slack_app_token: SecretStr | None = Field(default=None, validation_alias="SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias="SLACK_SIGNING_SECRET"
    )
    slack_api_url: str = Field(default="https://slack.com/api/", validation_alias="SLACK_API_URL")
    # HTTP mode (when SLACK_APP_TOKEN is not set): where Slack's requests are received.
    slack_http_host: str = Field(default="0.0.0.0", validation_alias="SLACK_HTTP_HOST")
    slack_http_port: int = Field(default=3000, ge=1, le=65535, validation_alias="SLACK_HTTP_PORT")
    # Who may change a channel's subscriptions: anyone (default), or workspace admins and
    # owners plus the listed user ids.
    slack_admins_only: bool = Field(default=False, validation_alias="SLACK_ADMINS_ONLY")
    slack_allowed_users: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), validation_alias="SLACK_ALLOWED_USERS"
    )
    # Slack's limit on posts to one channel; raise it only for a local server.
    slack_channel_messages_per_second: float = Field(
        default=1.0, gt=0, validation_alias="SLACK_CHANNEL_MESSAGES_PER_SECOND"
    )
    # Chat commands a minute, per person and per chat (Telegram and Slack), and how many
    # may come at once; more are not run (handlers.rate_limit).
    user_commands_per_minute: float = Field(
        default=20.0, gt=0, validation_alias="PAPERWATCH_USER_COMMANDS_PER_MINUTE"
    )
    chat_commands_per_minute: float = Field(
        default=30.0, gt=0, validation_alias="PAPERWATCH_CHAT_COMMANDS_PER_MINUTE"
    )
    command_burst: int = Field(default=5, ge=1, validation_alias="PAPERWATCH_COMMAND_BURST")

    arxiv_rss_url: str = Field(
        default="https://rss.arxiv.org/rss/", validation_alias="ARXIV_RSS_URL"
    )
    arxiv_oai_url: str = Field(
        default="https://oaipmh.arxiv.org/oai", validation_alias="ARXIV_OAI_URL"
    )
    arxiv_api_url: str = Field(  # papers by id, for /follow like (bot.arxiv.by_id)
        default="https://export.arxiv.org/api/query", validation_alias="ARXIV_API_URL"
    )
    arxiv_categories: Annotated[tuple[str, ...], NoDecode] = Field(
        default=DEFAULT_CATEGORIES, validation_alias="ARXIV_CATEGORIES"
    )
    # Delivery: how often workers look at the outbox, and how long a claim lasts before
    # another worker may take the row over (a worker that died mid-send).
    deliver_interval: float = Field(
        default=10.0, gt=0, validation_alias="PAPERWATCH_DELIVER_INTERVAL"
    )
    delivery_lease: float = Field(default=120.0, gt=0, validation_alias="PAPERWATCH_DELIVERY_LEASE")
    # Seconds a message keeps being retried while sending it fails (an outage), counted
    # from the first failure in a row; after that it is a dead letter (retry-dead).
    delivery_give_up_after: float = Field(
        default=86400.0, gt=0, validation_alias="PAPERWATCH_DELIVERY_GIVE_UP_AFTER"
    )
    # Processes beat this often to share the flood limits and the chats (bot.services.peers).
    heartbeat_interval: float = Field(
        default=5.0, gt=0, validation_alias="PAPERWATCH_HEARTBEAT_INTERVAL"
    )
    arxiv_min_request_interval: float = Field(
        default=3.0, ge=0.0, validation_alias="ARXIV_MIN_REQUEST_INTERVAL"
    )
    # Follows per chat: a refusal names the limit and suggests /unfollow.
    max_topics_per_chat: int = Field(
        default=50, ge=1, validation_alias="PAPERWATCH_MAX_TOPICS_PER_CHAT"
    )
    max_queries_per_chat: int = Field(
        default=20, ge=0, validation_alias="PAPERWATCH_MAX_QUERIES_PER_CHAT"
    )
    # Limits on what arXiv's answers may cost us (bot.arxiv.client, bot.services.poll).
    arxiv_max_response_mib: float = Field(
        default=64.0, gt=0, validation_alias="ARXIV_MAX_RESPONSE_MIB"
    )
    arxiv_max_retry_after: float = Field(
        default=3600.0, ge=0, validation_alias="ARXIV_MAX_RETRY_AFTER"
    )
    arxiv_poll_timeout: float = Field(default=900.0, gt=0, validation_alias="ARXIV_POLL_TIMEOUT")
    # Seconds between the conditional GETs of the hour after arXiv's feed switches to a new
    # listing (bot.arxiv.calendar.fast_window), until that listing is stored; 0: none.
    arxiv_fast_poll_interval: float = Field(
        default=90.0, ge=0, validation_alias="ARXIV_FAST_POLL_INTERVAL"
    )
    # The ops endpoint (/healthz, /readyz, /metrics; bot.ops): off unless a port is set
    # (0 takes a free one). /healthz turns 503 once the scheduler has run no job for
    # `ops_stale_after` seconds.
    ops_port: int | None = Field(
        default=None, ge=0, le=65535, validation_alias="PAPERWATCH_OPS_PORT"
    )
    ops_host: str = Field(default="127.0.0.1", validation_alias="PAPERWATCH_OPS_HOST")
    ops_stale_after: float = Field(
        default=60.0, gt=0, validation_alias="PAPERWATCH_OPS_STALE_AFTER"
    )
    # /ask's optional language model (bot.adapters.llm): any OpenAI-compatible endpoint, on
    # only when the URL, the key and the model are all set; PAPERWATCH_LLM_DAILY_TOKENS=0: off.
    llm_url: str | None = Field(default=None, validation_alias="PAPERWATCH_LLM_URL")
    llm_api_key: SecretStr | None = Field(default=None, validation_alias="PAPERWATCH_LLM_API_KEY")
    llm_model: str | None = Field(default=None, validation_alias="PAPERWATCH_LLM_MODEL")
    llm_timeout: float = Field(
        default=20.0, gt=0, le=600, validation_alias="PAPERWATCH_LLM_TIMEOUT"
    )
    llm_daily_tokens: int = Field(
        default=200_000, ge=0, le=10**9, validation_alias="PAPERWATCH_LLM_DAILY_TOKENS"
    )

    @field_validator(
        "telegram_bot_token",
        "telegram_webhook_url",
        "telegram_webhook_secret",
        "slack_bot_token",
        "slack_app_token",
        "slack_signing_secret",
        "ops_port",
        "llm_url",
        "llm_api_key",
        "llm_model",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """`TELEGRAM_WEBHOOK_SECRET=` (or blanks) means unset, never an empty secret."""
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _webhook_secret_chars(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _WEBHOOK_SECRET.fullmatch(value.get_secret_value()):
            raise ValueError(
                "TELEGRAM_WEBHOOK_SECRET must be 1-256 characters A-Z a-z 0-9 _ -"
                " (e.g. the output of: openssl rand -hex 32)"
            )
        return value

    @field_validator("llm_url")
    @classmethod
    def _llm_url_is_http(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^\s/]+", value.strip()):
            raise ValueError(
                "PAPERWATCH_LLM_URL must be an http:// or https:// URL, e.g. "
                "https://api.openai.com/v1 or http://127.0.0.1:8080/v1"
            )
        return value.strip() if value is not None else None

    @field_validator("slack_allowed_users", mode="before")
    @classmethod
    def _split_users(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return value

    @field_validator("arxiv_categories", mode="before")
    @classmethod
    def _split_categories(cls, value: object) -> object:
        if isinstance(value, str):
            parts = [p.strip() for p in value.replace("+", ",").replace(" ", ",").split(",")]
            return tuple(p for p in parts if p)
        return value

    @field_validator("arxiv_categories")
    @classmethod
    def _categories_not_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("ARXIV_CATEGORIES must name at least one category, e.g. cs.AI,cs.LG")
        return check_categories(value)

    @field_validator("arxiv_fast_poll_interval")
    @classmethod
    def _fast_polls_stay_polite(cls, value: float) -> float:
        if 0 < value < MIN_FAST_POLL_INTERVAL:
            raise ValueError(
                f"ARXIV_FAST_POLL_INTERVAL must be 0 (off) or at least"
                f" {MIN_FAST_POLL_INTERVAL:g} seconds, to stay polite to arXiv"
            )
        return value

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in logging.getLevelNamesMapping():
            raise ValueError(f"unknown log level {value!r}; use DEBUG, INFO, WARNING or ERROR")
        return level

    @field_validator("log_format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        log_format = value.strip().lower()
        if log_format not in LOG_FORMATS:
            raise ValueError(f"unknown log format {value!r}; use text or json")
        return log_format

    @property
    def telegram_enabled(self) -> bool:
        return self.telegram_bot_token is not None

    @property
    def slack_enabled(self) -> bool:
        """A bot token turns Slack on; `slack_receive_mode` says how it hears Slack."""
        return self.slack_bot_token is not None

    def telegram_webhook_secret_value(self) -> str:
        """Webhook mode's secret. Refuses to start without one: the webhook URL is public, and
        without it anyone could post updates as any user of any chat. (Not generated: it would
        differ in each process behind a load balancer, and each start would re-register it.)"""
        if self.telegram_webhook_secret is None:
            raise StartupError(
                "TELEGRAM_WEBHOOK_URL is set but TELEGRAM_WEBHOOK_SECRET is not; set it to a"
                " random string (e.g. openssl rand -hex 32), or unset the URL for long polling"
            )
        return self.telegram_webhook_secret.get_secret_value()

    def slack_receive_mode(self) -> str:
        """Either "socket" (SLACK_APP_TOKEN) or "http" (SLACK_SIGNING_SECRET verifies requests);
        refuses to start with neither, rather than serving unverified requests."""
        if self.slack_app_token is not None:
            return "socket"
        if self.slack_signing_secret is not None:
            return "http"
        raise StartupError(
            "SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) nor"
            " SLACK_SIGNING_SECRET (HTTP mode) is; set one of them"
        )

    @property
    def llm_enabled(self) -> bool:
        """Whether /ask may use the language model: URL, key and model all set (and a
        budget above 0). Refuses to start with only some of the three."""
        given = {
            "PAPERWATCH_LLM_URL": self.llm_url,
            "PAPERWATCH_LLM_API_KEY": self.llm_api_key,
            "PAPERWATCH_LLM_MODEL": self.llm_model,
        }
        missing = [name for name, value in given.items() if value is None]
        if missing and len(missing) < len(given):
            raise StartupError(
                f"the language model for /ask needs {', '.join(missing)} as well"
                " (set all three of PAPERWATCH_LLM_URL, _API_KEY and _MODEL, or none)"
            )
        return not missing and self.llm_daily_tokens > 0

    def secret_values(self) -> tuple[str, ...]:
        """Every secret configured, for the log filter that keeps them out of logs."""
        secrets = (
            self.telegram_bot_token,
            self.telegram_webhook_secret,
            self.slack_bot_token,
            self.slack_app_token,
            self.slack_signing_secret,
            self.llm_api_key,
        )
        return tuple(s.get_secret_value() for s in secrets if s is not None)
