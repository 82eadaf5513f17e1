"""Everything Telegram: adapter, messenger, rendering, commands, transport and limits."""
