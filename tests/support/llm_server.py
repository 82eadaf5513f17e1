"""A fake OpenAI-compatible chat-completions endpoint on 127.0.0.1 (never a real model).

    with serving_llm() as llm:
        llm.answer("Web agents use shaped rewards [1].", total_tokens=321)
        ... PAPERWATCH_LLM_URL=llm.url (".../v1"), the bot POSTs to .../v1/chat/completions

Every request is recorded (path, headers, JSON body) in `requests`. What it answers is set
by `answer` (a completion with that text and usage), `fail` (a status and a raw body, e.g.
500 or malformed JSON) or `hang` (no answer until the test ends).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any  # the JSON sent, or None when it was not JSON

    @property
    def user_message(self) -> str:
        return next(m["content"] for m in self.body["messages"] if m["role"] == "user")


class FakeLlm:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.url = ""
        self._status = 200
        self._body = b""
        self._hang = False
        self.released = threading.Event()
        self.answer("Nothing set [1].")

    def answer(self, text: str, total_tokens: int | None = 100) -> None:
        completion: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
        if total_tokens is not None:
            completion["usage"] = {"total_tokens": total_tokens}
        self._status, self._body, self._hang = 200, json.dumps(completion).encode(), False

    def fail(self, status: int, body: bytes) -> None:
        self._status, self._body, self._hang = status, body, False

    def hang(self) -> None:
        self._hang = True


def _handler(fake: FakeLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            fake.requests.append(Request(self.path, dict(self.headers), body))
            if fake._hang:
                fake.released.wait(30)
                return
            self.send_response(fake._status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(fake._body)))
            self.end_headers()
            self.wfile.write(fake._body)

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

    return Handler


@contextmanager
def serving_llm() -> Iterator[FakeLlm]:
    fake = FakeLlm()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        fake.released.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
