"""Everything Slack: adapter, messenger, rendering, commands, limits and the app manifest."""
