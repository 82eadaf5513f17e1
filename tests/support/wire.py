"""What the fake servers share: reading a request body the way clients send it."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


def read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request body, whether sent with a Content-Length or chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        data = b""
        while size := int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16):
            data += handler.rfile.read(size)
            handler.rfile.readline()
        handler.rfile.readline()
        return data
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
