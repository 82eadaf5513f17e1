"""PTB's Bot on the aiohttp transport (`AiohttpRequest`), over real sockets on 127.0.0.1.

Against the fake Bot API: what arrives is what PTB meant to send (JSON bodies, file
uploads). Against small asyncio servers: timeouts, refused connections and proxies
become PTB's own errors and settings.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.error import BadRequest, NetworkError, TimedOut
from telegram.request import BaseRequest

from bot.adapters.telegram.transport import AiohttpRequest
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

TOKEN = "123456:HTTP-test"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # arbitrary binary, NUL bytes included


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    with serve_fake_telegram() as tg:
        yield tg


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _serve(handler: Handler) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.fixture
async def silent() -> AsyncIterator[int]:
    """A server that takes connections and requests and never answers."""
    release = asyncio.Event()

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await release.wait()
        writer.close()

    server, port = await _serve(hang)
    yield port
    release.set()
    server.close()


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_a_message_arrives_as_ptb_built_it(fake: FakeTelegram) -> None:
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Why?", callback_data="w:1")]])
    text = "<b>Agents &amp; RL</b> עברית 🚀 zero\u200bwidth"
    async with Bot(TOKEN, base_url=fake.base_url, request=AiohttpRequest(2)) as bot:
        message = await bot.send_message(
            42,
            text,
            parse_mode=ParseMode.HTML,
            link_preview_options=LinkPreviewOptions(is_disabled=True),
            reply_markup=markup,
        )
    (sent,) = fake.sent
    assert sent.chat_id == 42 and sent.params["text"] == text
    assert sent.params["reply_markup"] == markup.to_dict()  # JSON text inside the JSON body
    assert sent.params["link_preview_options"] == {"is_disabled": True}
    assert message.text == "Agents & RL עברית 🚀 zero\u200bwidth"  # the answer, parsed by PTB


async def test_an_upload_arrives_byte_for_byte(fake: FakeTelegram) -> None:
    async with Bot(TOKEN, base_url=fake.base_url, request=AiohttpRequest(2)) as bot:
        await bot.send_photo(
            42, PNG, caption="a <b>chart</b>", parse_mode=ParseMode.HTML, filename="momentum.png"
        )
    (sent,) = fake.sent
    assert sent.method == "sendPhoto" and sent.params["caption"] == "a <b>chart</b>"
    assert sent.photo is not None and sent.photo.data == PNG
    assert sent.photo.filename == "momentum.png"


async def test_api_errors_keep_their_meaning(fake: FakeTelegram) -> None:
    async with Bot(TOKEN, base_url=fake.base_url, request=AiohttpRequest(2)) as bot:
        with pytest.raises(BadRequest, match="text is empty"):
            await bot.send_message(42, "")


async def test_a_silent_server_times_out(silent: int) -> None:
    request = AiohttpRequest(2, read_timeout=0.3)
    async with request:
        started = time.monotonic()
        with pytest.raises(TimedOut):
            await request.post(f"http://127.0.0.1:{silent}/bot{TOKEN}/getMe")
        assert time.monotonic() - started < 3


async def test_waiting_for_a_free_connection_times_out(silent: int) -> None:
    request = AiohttpRequest(1, read_timeout=None, pool_timeout=0.2, connect_timeout=0.2)
    async with request:
        hung = asyncio.create_task(request.post(f"http://127.0.0.1:{silent}/bot{TOKEN}/getMe"))
        await asyncio.sleep(0.2)  # it holds the only connection
        started = time.monotonic()
        with pytest.raises(TimedOut) as caught:
            await request.post(f"http://127.0.0.1:{silent}/bot{TOKEN}/getMe")
        assert time.monotonic() - started < 3
        hung.cancel()
    # aiohttp says "Connection timeout to host <url>", and the URL holds the token
    told = "".join(traceback.format_exception(caught.value))
    assert "Connection timeout to host http://127.0.0.1" in told
    assert TOKEN not in told and TOKEN.split(":")[1] not in told


async def test_a_refused_connection_is_a_network_error() -> None:
    async with AiohttpRequest(1) as request:
        with pytest.raises(NetworkError) as caught:
            await request.post(f"http://127.0.0.1:{free_port()}/bot{TOKEN}/getMe")
    assert not isinstance(caught.value, TimedOut)
    assert "aiohttp.ClientConnectorError" in str(caught.value)


async def test_requests_need_initialize() -> None:
    request = AiohttpRequest(1)  # PTB wraps the RuntimeError, as it does httpx's
    with pytest.raises(NetworkError, match="not initialized"):
        await request.post(f"http://127.0.0.1:{free_port()}/bot{TOKEN}/getMe")
    async with request:
        pass
    with pytest.raises(NetworkError, match="not initialized"):  # and again after shutdown
        await request.post(f"http://127.0.0.1:{free_port()}/bot{TOKEN}/getMe")


async def test_the_proxy_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, fake: FakeTelegram
) -> None:
    seen: list[str] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        seen.append(head.split("\r\n")[0])
        length = next(
            int(line.split(":")[1])
            for line in head.split("\r\n")
            if line.lower().startswith("content-length:")
        )
        await reader.readexactly(length)
        body = json.dumps({"ok": True, "result": True}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server, port = await _serve(proxy)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("NO_PROXY", "localhost")
    async with AiohttpRequest(1) as request:
        assert await request.post(f"http://api.telegram.invalid/bot{TOKEN}/logOut") is True
    assert seen == [f"POST http://api.telegram.invalid/bot{TOKEN}/logOut HTTP/1.1"]

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the fake is reached directly
    async with Bot(TOKEN, base_url=fake.base_url, request=AiohttpRequest(1)) as bot:
        assert (await bot.get_me()).username == "paperwatch_test_bot"
    assert len(seen) == 1
    server.close()


def test_timeouts_keep_ptb_meanings() -> None:
    request = AiohttpRequest(
        1,
        read_timeout=5,
        write_timeout=6,
        connect_timeout=7,
        pool_timeout=1,
        media_write_timeout=20,
    )
    default = BaseRequest.DEFAULT_NONE
    plain = request._timeout(False, read=default, write=default, connect=default, pool=default)
    assert (plain.sock_read, plain.sock_connect, plain.connect, plain.total) == (5, 7, 8, 19)
    upload = request._timeout(True, read=default, write=default, connect=default, pool=default)
    assert upload.total == 5 + 20 + 7 + 1
    given = request._timeout(False, read=None, write=default, connect=2, pool=default)
    assert (given.sock_read, given.sock_connect, given.connect, given.total) == (None, 2, 3, None)
