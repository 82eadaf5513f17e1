"""The ops endpoint of a real `paperwatch run` process: served when PAPERWATCH_OPS_PORT is
set, and a port that is taken stops the start with one line, not a traceback."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.test_cli import SMALL_RSS, _clean_env, paperwatch
from tests.support.arxiv_server import Canned, serve_fake_arxiv

LISTENING = re.compile(r"ops endpoint on http://127\.0\.0\.1:(\d+) ")


def wait_for(check: Callable[[], object], what: str, seconds: float = 30.0) -> object:
    deadline = time.monotonic() + seconds
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:g} s: {what}")
        time.sleep(0.05)
    return result


def polls(text: str) -> float:
    """paperwatch_poll_papers_count of an exposition."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "paperwatch_poll_papers_count":
                return sample.value
    raise AssertionError("no paperwatch_poll_papers_count")


def test_a_running_bot_serves_its_endpoint(tmp_path: Path) -> None:
    with serve_fake_arxiv() as fake:
        fake.add("/rss/cs.LG+cs.AI", Canned(SMALL_RSS.read_bytes()))
        env = _clean_env(
            {
                "ARXIV_RSS_URL": fake.url + "/rss/",
                "ARXIV_OAI_URL": fake.url + "/oai",
                "ARXIV_CATEGORIES": "cs.LG,cs.AI",
                "ARXIV_MIN_REQUEST_INTERVAL": "0",
                "PAPERWATCH_LOG_LEVEL": "INFO",
                "PAPERWATCH_OPS_PORT": "0",  # a free port, which the log names
            }
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "run"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=env,
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
        reader.start()
        try:

            def port() -> int | None:
                found = [m for line in list(lines) if (m := LISTENING.search(line))]
                return int(found[0].group(1)) if found else None

            base = f"http://127.0.0.1:{wait_for(port, 'the endpoint is announced')}"
            with httpx.Client(base_url=base, timeout=10) as http:
                wait_for(lambda: http.get("/healthz").status_code == 200, "alive")
                assert http.get("/readyz").text == "ok\n"
                wait_for(lambda: polls(http.get("/metrics").text) == 1, "the poll on start")
            assert process.stdin is not None
            process.stdin.close()  # the terminal chat ends, and the bot with it
            assert process.wait(timeout=60) == 0, "".join(lines)
        finally:
            process.kill()
            reader.join(timeout=10)
    assert "Traceback" not in "".join(lines)


def test_a_taken_port_is_one_clear_line(tmp_path: Path, closed_port: int) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = paperwatch(
            "run",
            cwd=tmp_path,
            env={
                "PAPERWATCH_OPS_PORT": str(port),
                "ARXIV_RSS_URL": f"http://127.0.0.1:{closed_port}/rss/",
                "ARXIV_OAI_URL": f"http://127.0.0.1:{closed_port}/oai",
            },
        )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"paperwatch: cannot serve the ops endpoint on 127.0.0.1:{port} (")
    assert "(Address already in use)" in line and "PAPERWATCH_OPS_PORT" in line
