"""While the terminal chat has the terminal, log records go to a file, still redacted, and
come back to the terminal afterwards."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path

import pytest

from bot.log_secrets import RedactSecrets, logging_to_file

SECRET = "123456:AAHsecret-token-value"


def test_records_go_to_the_file_redacted_and_not_to_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What `configure_logging` sets up: a root handler on stderr, with redaction.
    terminal = logging.StreamHandler(sys.stderr)
    terminal.addFilter(RedactSecrets([SECRET]))
    root = logging.getLogger()
    root.addHandler(terminal)
    path = tmp_path / "paperwatch.log"
    try:
        with logging_to_file(path):
            logging.getLogger("bot.services.poll").warning("arxiv poll failed token=%s", SECRET)
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.warn("a library's warning", DeprecationWarning, stacklevel=1)
            assert terminal not in root.handlers
        assert capsys.readouterr().err == ""
        logging.getLogger("bot.app").warning("after the chat")
        assert terminal in root.handlers
    finally:
        root.removeHandler(terminal)
    text = path.read_text()
    assert "WARNING bot.services.poll: arxiv poll failed token=[redacted]" in text
    assert SECRET not in text
    assert "a library's warning" in text
    assert "after the chat" in capsys.readouterr().err
    assert "after the chat" not in text
