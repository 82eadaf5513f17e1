"""What tests and benches build on: fakes of the services paperwatch talks to (arXiv, the
Telegram Bot API, Slack) and the helpers that drive them."""
