"""HTTP for the fake Telegram server: decoding the requests PTB sends, sending JSON answers.

PTB POSTs `application/x-www-form-urlencoded` (or `multipart/form-data` when it uploads a
file) where strings are sent as they are and every other value as JSON text; `coerce` undoes
that by field name. A JSON body and query-string parameters are accepted too.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.telegram_methods import Upload
from tests.support.wire import read_body

JSON_FIELDS = {"reply_markup", "entities", "caption_entities", "allowed_updates", "commands"}
JSON_FIELDS |= {"scope", "link_preview_options", "reply_parameters"}
INT_FIELDS = {"chat_id", "message_id", "user_id", "offset", "limit", "timeout", "cache_time"}
BOOL_FIELDS = {"disable_web_page_preview", "disable_notification", "show_alert"}
BOOL_FIELDS |= {"drop_pending_updates", "protect_content", "has_spoiler"}

Dispatch = Callable[[str | None, str, dict, dict], tuple[int, dict]]
# A file download (`/file/bot<token>/<file_path>`): the file's bytes, or None (404).
Download = Callable[[str, str], bytes | None]
_PATH = re.compile(r"/bot([^/]*)/([^/]*)")
_FILE = re.compile(r"/file/bot([^/]*)/(.+)")


class WireServer(ThreadingHTTPServer):
    """A threading HTTP server on a free port of 127.0.0.1 that hands each call to `dispatch`."""

    daemon_threads = True

    def __init__(self, dispatch: Dispatch, download: Download | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.dispatch = dispatch
        self.download = download

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up (a cancelled long poll); report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def coerce(name: str, value: object) -> object:
    """Undo PTB's form encoding: non-string values arrive as JSON text."""
    if not isinstance(value, str):
        return value
    if name in JSON_FIELDS:
        try:
            return json.loads(value)
        except ValueError:
            return value  # left for validation to reject
    if name in INT_FIELDS and re.fullmatch(r"-?\d+", value):
        return int(value)
    if name in INT_FIELDS and re.fullmatch(r"\d+\.\d*", value):
        return float(value)
    if name in BOOL_FIELDS and value in ("true", "false"):
        return value == "true"
    return value


def parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, Upload]]:
    """Split a multipart/form-data body into its text fields and its files."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    fields: dict[str, str] = {}
    files: dict[str, Upload] = {}
    if match is None:
        return fields, files
    for chunk in body.split(b"--" + match.group(1).encode())[1:]:
        if chunk.startswith(b"--"):
            break
        head, _, content = chunk.partition(b"\r\n\r\n")
        headers = head.decode("utf-8", "replace")
        name = re.search(r'[;\s]name="([^"]*)"', headers)
        filename = re.search(r'filename="([^"]*)"', headers)
        kind = re.search(r"(?i)content-type:\s*([^\r\n]+)", headers)
        content = content.removesuffix(b"\r\n")
        if name is None:
            continue
        if filename is None:
            fields[name.group(1)] = content.decode("utf-8", "replace")
        else:
            mime = kind.group(1).strip() if kind else "application/octet-stream"
            files[name.group(1)] = Upload(filename.group(1), mime, content)
    return fields, files


class _Handler(BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1: PTB reuses its connections; every answer has a Content-Length."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    server: WireServer

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        body = read_body(self)
        wanted = _FILE.fullmatch(parts.path)
        if wanted is not None and self.server.download is not None:
            self._send_file(self.server.download(wanted[1], wanted[2]))
            return
        params: dict[str, Any] = dict(parse_qsl(parts.query, keep_blank_values=True))
        files: dict[str, Upload] = {}
        content_type = self.headers.get("Content-Type", "")
        try:
            if content_type.startswith("application/json") and body:
                params |= json.loads(body)
            elif content_type.startswith("application/x-www-form-urlencoded"):
                params |= dict(parse_qsl(body.decode(), keep_blank_values=True))
            elif content_type.startswith("multipart/form-data"):
                fields, files = parse_multipart(content_type, body)
                params |= fields
        except (ValueError, TypeError):  # not JSON, or JSON that is not an object
            params = {}
        params = {name: coerce(name, value) for name, value in params.items()}
        match = _PATH.fullmatch(parts.path)
        if match is None:
            status, answer = self.server.dispatch(None, parts.path, params, files)
        else:
            status, answer = self.server.dispatch(match[1], match[2], params, files)
        data = json.dumps(answer, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_file(self, content: bytes | None) -> None:
        self.send_response(200 if content is not None else 404)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(content or b"")))
        self.end_headers()
        self.wfile.write(content or b"")

    do_GET = do_POST = _handle

    def log_message(self, format: str, *args: object) -> None:
        pass
