"""What tests and benches build on: fakes of the services paperwatch talks to (arXiv, the
Telegram Bot API, Slack), the helpers that drive them, and throwaway PostgreSQL databases
(postgres.py)."""
