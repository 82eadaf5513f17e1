"""The Slack app manifest matches what the adapter expects."""

from pathlib import Path

import yaml

from bot.adapters.slack.commands import SLASH_COMMAND

MANIFEST = Path(__file__).parents[2] / "bot" / "adapters" / "slack" / "manifest.yaml"


def test_manifest_declares_what_the_app_uses() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    commands = [c["command"] for c in manifest["features"]["slash_commands"]]
    assert commands == [SLASH_COMMAND]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert "app_home_opened" in manifest["settings"]["event_subscriptions"]["bot_events"]
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {"commands", "chat:write", "im:write", "users:read"} <= scopes
