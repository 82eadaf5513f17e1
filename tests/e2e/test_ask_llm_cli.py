"""/ask with a language model in a real `paperwatch console` and `paperwatch run`: the
settings reach the model (a fake OpenAI-compatible server on 127.0.0.1), its answer comes
back cited, the key stays out of DEBUG logs, and a partial configuration stops the start
in one line before anything is opened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.llm_server import serving_llm

KEY = "sk-e2e-secret-llm-key-31337"
QUESTION = "/ask which papers train search agents with GRPO?\n"


def paperwatch(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))
    }
    environment |= {"PAPERWATCH_LOG_LEVEL": "DEBUG", **env}
    for name in ("TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN"):
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "bot", command],
        input=QUESTION,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=90,
    )


def test_the_console_asks_the_model_and_shows_its_cited_answer(tmp_path: Path) -> None:
    with serving_llm() as llm:
        llm.answer("EviSD corrects the GRPO advantage with evidence [1].", total_tokens=900)
        env = {
            "PAPERWATCH_LLM_URL": llm.url,
            "PAPERWATCH_LLM_API_KEY": KEY,
            "PAPERWATCH_LLM_MODEL": "fake-model",
        }
        result = paperwatch("console", tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert len(llm.requests) == 1
    assert llm.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert "written by a language model:" in result.stdout
    assert "EviSD corrects the GRPO advantage with evidence [1]." in result.stdout
    assert " DEBUG " in result.stderr  # debug logging was on
    assert KEY not in result.stderr
    assert KEY not in result.stdout


@pytest.mark.parametrize("command", ["console", "run"])
def test_a_partial_configuration_is_one_line(tmp_path: Path, command: str) -> None:
    env = {
        "PAPERWATCH_LLM_URL": "http://127.0.0.1:9/v1",
        "PAPERWATCH_LLM_API_KEY": KEY,
        "PAPERWATCH_LOG_LEVEL": "WARNING",
    }
    result = paperwatch(command, tmp_path, env)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "PAPERWATCH_LLM_MODEL" in lines[0]
    assert KEY not in result.stderr
    assert not (tmp_path / "paperwatch.db").exists()  # stopped before the database


def test_paperwatch_ask_uses_the_model_as_the_console_does(tmp_path: Path) -> None:
    with serving_llm() as llm:
        llm.answer("EviSD corrects the GRPO advantage with evidence [1].", total_tokens=900)
        env = {
            "PAPERWATCH_LLM_URL": llm.url,
            "PAPERWATCH_LLM_API_KEY": KEY,
            "PAPERWATCH_LLM_MODEL": "fake-model",
        }
        environment = {
            k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))
        }
        # The terminal chat stores the bundled sample papers in a new database; ask reads them.
        assert paperwatch("console", tmp_path, {}).returncode == 0
        result = subprocess.run(
            [sys.executable, "-m", "bot", "ask", "which papers train search agents with GRPO?"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=environment | env,
            timeout=90,
        )
    assert result.returncode == 0, result.stderr
    assert len(llm.requests) == 1
    assert "EviSD corrects the GRPO advantage with evidence [1]." in result.stdout
