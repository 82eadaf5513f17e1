"""`.env.example` documents every setting, and only settings (bot/config.py `Settings`)."""

from __future__ import annotations

import re
from pathlib import Path

from bot.config import Settings

ROOT = Path(__file__).resolve().parents[2]
#: Variables .env.example may name that paperwatch itself does not read, and who reads them.
NOT_SETTINGS = {"POSTGRES_PASSWORD": "compose.yaml's database container"}


def documented() -> set[str]:
    """The NAME of every `NAME=value` line, commented out or not."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE))


def settings_names() -> set[str]:
    return {str(field.validation_alias) for field in Settings.model_fields.values()}


def test_every_setting_is_in_env_example() -> None:
    assert settings_names() - documented() == set()


def test_env_example_names_only_settings() -> None:
    assert documented() - settings_names() - set(NOT_SETTINGS) == set()


def test_every_setting_has_an_environment_name() -> None:
    missing = [name for name, f in Settings.model_fields.items() if not f.validation_alias]
    assert missing == []
