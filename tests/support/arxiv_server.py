"""A tiny local HTTP server that replays saved arXiv responses (never the real arXiv).

Each path maps to a queue of canned responses; the last one repeats. Every request is
recorded (path, query, headers, monotonic time) for the test to inspect.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Canned:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/xml; charset=utf-8"
    action: str = "respond"  # "respond" | "reset" (close without answering) | "hang"
    hang_seconds: float = 2.0


@dataclass
class Seen:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    at: float


class FakeArxiv:
    def __init__(self) -> None:
        self.routes: dict[str, list[Canned]] = {}
        self.responder: Callable[[Seen], Canned] | None = None  # overrides routes
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self.url = ""

    def add(self, path: str, *responses: Canned) -> None:
        self.routes.setdefault(path, []).extend(responses)

    def _next(self, path: str) -> Canned:
        with self._lock:
            queue = self.routes.get(path)
            if not queue:
                return Canned(b"not found", 404, content_type="text/plain")
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def _record(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)


def _handler(fake: FakeArxiv) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            fake._record(
                Seen(parts.path, parse_qs(parts.query), dict(self.headers), time.monotonic())
            )
            seen = fake.requests[-1]
            canned = fake.responder(seen) if fake.responder else fake._next(parts.path)
            if canned.action == "reset":
                # SO_LINGER 0 makes close() send a TCP RST: a real "connection reset".
                self.close_connection = True
                self.request.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.request.close()
                return
            if canned.action == "hang":
                time.sleep(canned.hang_seconds)
            self.send_response(canned.status)
            self.send_header("Content-Type", canned.content_type)
            self.send_header("Content-Length", str(len(canned.body)))
            for name, value in canned.headers.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(canned.body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client stopped reading: that is its right

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def gzip_bomb(mib: int) -> bytes:
    """A gzip stream of `mib` MiB of zero bytes (about 1 KiB per MiB), built in pieces."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    return b"".join([*(packer.compress(zeros) for _ in range(mib)), packer.flush()])


@contextmanager
def serve_fake_arxiv() -> Iterator[FakeArxiv]:
    fake = FakeArxiv()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
