"""The fake Telegram Bot API server, driven by the real python-telegram-bot over HTTP."""

from __future__ import annotations

import asyncio
import datetime as dtm
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from telegram import Bot, BotCommand, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    EndPointNotFound,
    Forbidden,
    RetryAfter,
)
from telegram.ext import Application, CommandHandler, ContextTypes

from tests.support.telegram_html import (
    check_reply_markup,
    check_telegram_html,
    parse_telegram_html,
    utf16_len,
)
from tests.support.telegram_server import FakeTelegram, serve_fake_telegram

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PARSE = "Bad Request: can't parse entities: "


# ----- the HTML checker (pure) -------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "<b>bold <i>bold italic</i></b> plain",
        '<a href="https://arxiv.org/list?a=1&amp;b=2">list</a>',
        "&#60;tag&#62; &#x1F600; &lt;&gt;&amp;&quot;",
        "new 🚀🧪 papers 👩‍🔬",
        "RTL: مرحبا بالعالم ‏שלום‎",
        "zero\u200bwidth\u200djoiner\ufeff",
        r"$\mathcal{O}(n^2)$ and $&lt;$ and $a_{i}^{2}$",
        '<span class="tg-spoiler">s</span> <tg-spoiler>t</tg-spoiler>',
        '<pre><code class="language-python">print(1 &lt; 2)</code></pre>',
        "<blockquote expandable>long abstract</blockquote><blockquote>q</blockquote>",
        '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>',
        "<u>u</u><ins>i</ins><s>s</s><strike>k</strike><del>d</del><em>e</em><strong>s</strong>",
        "a > b, <B>upper case tags</B>, <code>x</code >",
        "x" * 4000 + "<b></b>" * 100,
        "😀" * 2048,
        "é" * 4096,
    ],
)
def test_telegram_accepts(text: str) -> None:
    assert check_telegram_html(text) is None


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("<script>alert(1)</script>", 'Unsupported start tag "script" at byte offset 0'),
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("é <x>", 'Unsupported start tag "x" at byte offset 3'),
        ("R&D", 'Unescaped "&" at byte offset 1: write "&amp;"'),
        ("&copy; 2024", 'Unescaped "&" at byte offset 0: write "&amp;"'),
        ("&lt no semicolon", 'Unescaped "&" at byte offset 0: write "&amp;"'),
        ('<a href="?a=1&b=2">x</a>', 'Unescaped "&" at byte offset 13: write "&amp;"'),
        ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'),
        ("<b>x", 'Can\'t find end tag corresponding to start tag "b"'),
        ("</b>", "Unexpected end tag at byte offset 0"),
        ("<i>a</i   ", "Unclosed end tag at byte offset 4"),
        ("a <", "Unclosed start tag at byte offset 2"),
        ('<a href="x>y</a>', "Unclosed start tag at byte offset 0"),
        ("<a href=x onclick=y>z</a>", 'Unsupported attribute "onclick" in the tag "a" at byte'),
        ('<b class="x">y</b>', 'Unsupported attribute "class" in the tag "b" at byte offset 0'),
        ('<code class="python">y</code>', 'Unsupported attribute "class" in the tag "code"'),
        ("<a href=https://x.org>x</a>", "Unexpected end of name token at byte offset 8"),
        ("<b bold>x</b>", 'Expected equal sign in declaration of an attribute of the tag "b"'),
        ('<span class="x">s</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
        ("<tg-emoji>👍</tg-emoji>", 'Tag "tg-emoji" must have attribute "emoji-id"'),
    ],
)
def test_telegram_rejects_markup(text: str, error: str) -> None:
    assert (check_telegram_html(text) or "").startswith(PARSE + error)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("x" * 4097, "Bad Request: message is too long"),
        ("😀" * 2048 + "x", "Bad Request: message is too long"),  # 4,097 UTF-16 units
        ("<b>" + "&amp;" * 4097 + "</b>", "Bad Request: message is too long"),
        ("", "Bad Request: message text is empty"),
        ("<b> </b>\n", "Bad Request: message text is empty"),
    ],
)
def test_telegram_checks_the_visible_length(text: str, error: str) -> None:
    assert check_telegram_html(text) == error


def test_lenient_mode_forgives_what_telegram_forgives() -> None:
    assert check_telegram_html("R&D <a href=x onclick=y>z</a>", strict=False) is None
    assert parse_telegram_html("R&D &lt", strict=False).text == "R&D <"
    assert check_telegram_html("a < b", strict=False) is not None


def test_entities_use_utf16_offsets() -> None:
    parsed = parse_telegram_html(
        '😀<b>x<i>y</i></b> <pre><code class="language-py">z</code></pre> <a href="u?a&amp;b">l</a>'
    )
    assert parsed.text == "😀xy z l"
    assert utf16_len(parsed.text) == len(parsed.text) + 1
    assert parsed.entities == [
        {"offset": 2, "length": 2, "type": "bold"},
        {"offset": 3, "length": 1, "type": "italic"},
        {"offset": 5, "length": 1, "type": "pre", "language": "py"},
        {"offset": 7, "length": 1, "type": "text_link", "url": "u?a&b"},
    ]


@pytest.mark.parametrize(
    ("button", "error"),
    [
        ({"text": "ok", "callback_data": "x" * 64}, None),
        ({"text": "ok", "callback_data": "x" * 65}, "Bad Request: BUTTON_DATA_INVALID"),
        ({"text": "ok", "callback_data": "é" * 33}, "Bad Request: BUTTON_DATA_INVALID"),
        ({"text": "ok", "url": "https://arxiv.org"}, None),
        ({"callback_data": "x"}, "can't parse inline keyboard button: Can't find field \"text\""),
        ({"text": "ok"}, "Text buttons are unallowed in the inline keyboard"),
    ],
)
def test_inline_keyboard_checks(button: dict, error: str | None) -> None:
    result = check_reply_markup({"inline_keyboard": [[button]]})
    assert result == error if error is None else error in (result or "")


def test_reply_markup_must_be_json() -> None:
    assert (
        check_reply_markup("{nope") == "Bad Request: can't parse reply keyboard markup JSON object"
    )
    assert check_reply_markup('{"remove_keyboard": true}') is None


# ----- the server, through the real PTB Bot ------------------------------------------------
@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with serve_fake_telegram() as fake:
        yield fake


@pytest.fixture
async def bot(tg: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(token="123:ABC", base_url=tg.base_url) as bot:
        yield bot


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d, callback_data=d) for d in data]])


def seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else value


async def test_get_me_uses_the_token_id(bot: Bot, tg: FakeTelegram) -> None:
    me = await bot.get_me()
    assert (me.id, me.username, me.is_bot) == (123, "paperwatch_test_bot", True)
    assert tg.calls == ["getMe", "getMe"]  # Bot.initialize() asks too


async def test_send_message_is_recorded(bot: Bot, tg: FakeTelegram) -> None:
    text = '<b>New</b> on <a href="https://arxiv.org/abs/1?x=1&amp;y=2">RL</a> 🚀'
    message = await bot.send_message(
        42, text, parse_mode="HTML", reply_markup=keyboard("more:1"), disable_web_page_preview=True
    )
    assert (message.text, message.chat.id, message.from_user.id) == ("New on RL 🚀", 42, 123)
    assert message.reply_markup == keyboard("more:1")
    [sent] = tg.messages_for(42)
    assert (sent.text, sent.parse_mode, sent.visible_text) == (text, "HTML", "New on RL 🚀")
    assert sent.reply_markup == {
        "inline_keyboard": [[{"text": "more:1", "callback_data": "more:1"}]]
    }
    assert sent.disable_web_page_preview is True
    assert sent.link_preview_options == {"is_disabled": True}
    assert tg.messages_for(7) == []


async def test_bad_html_is_rejected_like_telegram(bot: Bot, tg: FakeTelegram) -> None:
    with pytest.raises(BadRequest, match=r'(?i)Unsupported start tag "script"'):
        await bot.send_message(42, "<script>x</script>", parse_mode="HTML")
    with pytest.raises(BadRequest, match=r"(?i)message is too long"):  # PTB recases
        await bot.send_message(42, "x" * 4097)
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(42, "hi", reply_markup=keyboard("x" * 65))
    assert tg.sent == []
    assert [r.status for r in tg.rejected] == [400, 400, 400]
    assert tg.rejected[0].description.startswith(PARSE + 'Unsupported start tag "script"')


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_injected_faults(bot: Bot, tg: FakeTelegram) -> None:
    tg.fail_next("sendMessage", 429, retry_after=7)
    tg.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user", chat_id=5)
    tg.fail_next("sendMessage", 400, migrate_to_chat_id=-1001234, chat_id=-77)
    with pytest.raises(RetryAfter) as too_many:
        await bot.send_message(42, "a")
    assert seconds(too_many.value) == 7
    await bot.send_message(42, "b")  # the fault was used up
    with pytest.raises(Forbidden, match=r"(?i)bot was blocked by the user"):
        await bot.send_message(5, "c")
    with pytest.raises(ChatMigrated) as migrated:
        await bot.send_message(-77, "d")
    assert migrated.value.new_chat_id == -1001234
    assert [s.text for s in tg.sent] == ["b"]
    assert tg.too_many_requests == 1
    assert tg.rejected[-1].parameters == {"migrate_to_chat_id": -1001234}


async def test_unknown_methods_answer_404_and_are_recorded(bot: Bot, tg: FakeTelegram) -> None:
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("sendNothing", api_kwargs={"chat_id": 1})
    assert tg.rejected[-1].description == "Not Found: method not found"
    assert tg.calls[-1] == "sendNothing"


async def test_get_updates_honours_offset(bot: Bot, tg: FakeTelegram) -> None:
    tg.push_message(42, "/follow RL for LLM Agents", username="ada")
    tg.push_message(-100, "hello", chat_type="supergroup", user_id=9)
    first, second = await bot.get_updates()
    assert first.message.text == "/follow RL for LLM Agents"
    assert first.message.entities[0].type == "bot_command"
    assert first.message.entities[0].length == len("/follow")
    assert (first.message.from_user.id, first.message.from_user.username) == (42, "ada")
    assert (second.message.chat.type, second.message.from_user.id) == ("supergroup", 9)
    assert len(await bot.get_updates()) == 2  # not confirmed yet
    [again] = await bot.get_updates(offset=second.update_id)
    assert again.update_id == second.update_id
    assert await bot.get_updates(offset=second.update_id + 1) == ()
    assert tg.pending_updates == 0


async def test_long_poll_wakes_when_an_update_arrives(bot: Bot, tg: FakeTelegram) -> None:
    started = time.monotonic()
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.05)
    tg.push_message(42, "hi")
    [update] = await poll
    assert update.message.text == "hi"
    assert time.monotonic() - started < 1


def test_long_poll_returns_empty_after_the_timeout() -> None:
    with serve_fake_telegram() as fake, httpx.Client() as client:
        started = time.monotonic()
        answer = client.post(f"{fake.base_url}1:A/getUpdates", data={"timeout": "0.2"}).json()
        assert answer == {"ok": True, "result": []}
        assert 0.15 < time.monotonic() - started < 1


async def test_webhook_and_concurrent_polls_conflict(bot: Bot, tg: FakeTelegram) -> None:
    tg.push_message(42, "old")
    await bot.set_webhook("https://example.org/hook")
    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates()
    await bot.delete_webhook(drop_pending_updates=True)
    assert tg.pending_updates == 0
    async with Bot(token="123:ABC", base_url=tg.base_url) as twin:  # a second bot instance
        first = asyncio.create_task(twin.get_updates(timeout=5))
        await asyncio.sleep(0.05)
        assert await bot.get_updates() == ()
        with pytest.raises(Conflict, match="terminated by other getUpdates request"):
            await first


async def test_allowed_updates_filter_delivery(bot: Bot, tg: FakeTelegram) -> None:
    tg.push_update(
        {"edited_message": {"message_id": 1, "date": 0, "chat": {"id": 1, "type": "private"}}}
    )
    tg.push_update({"chat_member": {"chat": {"id": -1, "type": "group"}}})  # not sent by default
    tg.push_update({"my_chat_member": {"chat": {"id": -1, "type": "group"}, "date": 0}})
    assert [u.my_chat_member is not None for u in await bot.get_updates()] == [False, True]
    tg.push_message(42, "text")
    [update] = await bot.get_updates(allowed_updates=["message"])
    assert update.message.text == "text"


async def test_odd_updates_reach_ptb(bot: Bot, tg: FakeTelegram) -> None:
    chat = {"id": -5, "type": "group", "title": "g"}
    sticker = {"file_id": "s", "file_unique_id": "u", "type": "regular", "width": 1, "height": 1}
    sticker |= {"is_animated": False, "is_video": False}
    tg.push_update({"message": {"message_id": 3, "date": 0, "chat": chat, "sticker": sticker}})
    tg.push_message(-5, "/start@other_bot", chat_type="group", user_id=77, is_bot=True)
    tg.push_update(
        {"message": {"message_id": 5, "date": 0, "chat": chat, "migrate_to_chat_id": -1009}}
    )
    tg.push_message(-100200, "post", chat_type="channel")
    updates = await bot.get_updates()
    assert updates[0].message.sticker.file_id == "s" and updates[0].message.text is None
    assert updates[1].message.from_user.is_bot is True
    assert updates[2].message.migrate_to_chat_id == -1009
    assert (
        updates[3].channel_post.text == "post" and updates[3].channel_post.sender_chat.id == -100200
    )


async def test_callback_query_round_trip(bot: Bot, tg: FakeTelegram) -> None:
    sent = await bot.send_message(42, "page 1", reply_markup=keyboard("page:2"))
    with pytest.raises(ValueError, match="no button"):
        tg.press_button(42, sent.message_id, "page:3")
    tg.press_button(42, sent.message_id, "page:2")
    [update] = await bot.get_updates()
    query = update.callback_query
    assert (query.data, query.message.text, query.from_user.id) == ("page:2", "page 1", 42)
    assert await query.answer("turning") is True
    edited = await query.edit_message_text("<i>page 2</i>", parse_mode="HTML")
    assert edited.text == "page 2" and edited.edit_date is not None
    assert tg.answered_callbacks[0]["text"] == "turning"
    assert [s.method for s in tg.sent] == ["sendMessage", "editMessageText"]
    assert tg.message(42, sent.message_id)["text"] == "page 2"
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await query.answer()
    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await bot.edit_message_text("<i>page 2</i>", 42, sent.message_id, parse_mode="HTML")


async def test_commands_are_recorded(bot: Bot, tg: FakeTelegram) -> None:
    await bot.set_my_commands([BotCommand("follow", "Follow a topic"), BotCommand("latest", "New")])
    assert [c["command"] for c in tg.commands] == ["follow", "latest"]
    assert [c.command for c in await bot.get_my_commands()] == ["follow", "latest"]
    with pytest.raises(BadRequest, match=r"(?i)BOT_COMMAND_INVALID"):
        await bot.set_my_commands([BotCommand("Follow-Topic", "bad name")])


async def test_send_photo_multipart(bot: Bot, tg: FakeTelegram) -> None:
    message = await bot.send_photo(42, PNG, caption="<b>chart</b>", parse_mode="HTML")
    assert message.caption == "chart" and message.photo[-1].width == 800
    sent = tg.sent[-1]
    assert (sent.method, sent.text, sent.photo.data) == ("sendPhoto", "<b>chart</b>", PNG)
    again = await bot.send_photo(42, message.photo[-1].file_id)
    assert again.photo
    with pytest.raises(BadRequest, match=r"(?i)IMAGE_PROCESS_FAILED"):
        await bot.send_photo(42, b"not an image")
    with pytest.raises(BadRequest, match=r"(?i)message caption is too long"):
        await bot.send_photo(42, PNG, caption="x" * 1025)


async def test_admin_checks(bot: Bot, tg: FakeTelegram) -> None:
    tg.set_admins(-100, [7], creator_id=1)
    assert (await bot.get_chat_member(-100, 7)).status == "administrator"
    assert (await bot.get_chat_member(-100, 1)).status == "creator"
    assert (await bot.get_chat_member(-100, 8)).status == "member"
    assert {m.user.id for m in await bot.get_chat_administrators(-100)} == {1, 7}
    with pytest.raises(BadRequest, match=r"(?i)no administrators in the private chat"):
        await bot.get_chat_administrators(42)
    assert await bot.send_chat_action(-100, "typing") is True


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_rate_limits(bot: Bot, tg: FakeTelegram) -> None:
    tg.rate_limit(per_chat_per_second=1.0, global_per_second=3, group_per_minute=2)
    await bot.send_message(1, "a")
    with pytest.raises(RetryAfter) as per_chat:
        await bot.send_message(1, "b")
    assert seconds(per_chat.value) == 1
    await bot.send_message(-10, "c")
    tg.rate_limit(per_chat_per_second=0, global_per_second=30, group_per_minute=2)
    await bot.send_message(-10, "d")
    with pytest.raises(RetryAfter):  # a third group message within the minute
        await bot.send_message(-10, "e")
    tg.rate_limit(per_chat_per_second=0, global_per_second=3, group_per_minute=20)
    with pytest.raises(RetryAfter):  # three messages went out within a second
        await bot.send_message(2, "f")
    assert tg.too_many_requests == 3
    tg.rate_limit(enabled=False)
    await bot.send_message(2, "g")


async def test_a_real_application_polls_and_replies(tg: FakeTelegram) -> None:
    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await update.effective_message.reply_html("<b>Welcome</b> &amp; hello")

    app = Application.builder().token("123:ABC").base_url(tg.base_url).build()
    app.add_handler(CommandHandler("start", start))
    async with app:
        await app.start()
        await app.updater.start_polling(poll_interval=0, timeout=1)
        tg.push_message(42, "/start")
        await tg.async_wait_until(lambda fake: len(fake.messages_for(42)) == 1, seconds=3)
        await app.updater.stop()
        await app.stop()
    assert tg.messages_for(42)[0].visible_text == "Welcome & hello"
    assert {"deleteWebhook", "getUpdates", "sendMessage"} <= set(tg.calls)


def test_sync_use_with_a_bot_in_another_thread() -> None:
    with serve_fake_telegram() as fake:

        def run_bot() -> None:
            with httpx.Client() as client:
                form = {"chat_id": "5", "text": "from a thread"}
                client.post(f"{fake.base_url}9:T/sendMessage", data=form)

        threading.Thread(target=run_bot).start()
        fake.wait_until(lambda f: len(f.sent) == 1, seconds=3)
        assert fake.sent[0].text == "from a thread"
        assert fake.bot_id == 9
