"""Slack, through slack_bolt (async): translate at the edge, nothing else.

One slash command, `/paperwatch <command> [args]`, carries every chat command. It is
acknowledged at once and answered after: ephemerally to the person, or in the
channel when it changed the channel's subscriptions. A channel's subscriptions
belong to the channel; in a DM, to the person. Buttons carry payloads signed for
the channel (or person) they were sent to. Socket Mode when SLACK_APP_TOKEN is set,
otherwise HTTP mode with signing-secret verification (bolt rejects bad signatures
and timestamps older than 5 minutes).
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt import BoltResponse
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot import buttons
from bot.adapters.slack.ask_modal import CALLBACK_ID, EMPTY, INVALID, ask_view, read_submission
from bot.adapters.slack.commands import SLASH_COMMAND, Origin, chat_key, origin, to_command
from bot.adapters.slack.files import follow_payload, read_shared, shared_file, typed_in_dm
from bot.adapters.slack.home import home_view
from bot.adapters.slack.limits import KeyedLimiter
from bot.adapters.slack.messenger import SlackMessenger
from bot.adapters.slack.render import render
from bot.config import Settings, StartupError
from bot.domain import Action, Button, ChatRef, Command, Platform, Reply, Role
from bot.network import cannot_listen, connect_failure, host_of, unreachable
from handlers.ask_about import GONE, topic_name
from handlers.base import Context, Registry, RoleLookup, not_a_command
from handlers.like_follows import bibtex_command
from handlers.overview import overview
from handlers.trends import momentum_chart

log = logging.getLogger(__name__)

# What Slack answers a post to a channel the app is not a member of (private channels
# it was not added to are not found at all).
_NOT_IN_CHANNEL = frozenset({"not_in_channel", "channel_not_found"})
NOT_IN_CHANNEL = (
    "I am not a member of this channel, so I cannot post here, and papers cannot reach it: "
    "add me with /invite @paperwatch, then try again."
)


class _NoUnusedTokenNotice(logging.Filter):
    """bolt reads SLACK_BOT_TOKEN from the environment by itself and, since its client
    already has the token, warns at every start that the one it read is unused: true, and
    nothing the person starting paperwatch can or should change."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


log.addFilter(_NoUnusedTokenNotice())


class SlackAdapter:
    """Runs the Slack app: Socket Mode, or HTTP on SLACK_HTTP_HOST:SLACK_HTTP_PORT."""

    def __init__(self, settings: Settings, registry: Registry, ctx: Context) -> None:
        assert settings.slack_bot_token is not None
        token = settings.slack_bot_token.get_secret_value()
        self._settings = settings
        self._registry = registry
        self._ctx = ctx
        self.key = buttons.button_key(token)
        self.client = AsyncWebClient(token=token, base_url=settings.slack_api_url)
        self.client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=2))
        secret = settings.slack_signing_secret
        self.app = AsyncApp(
            client=self.client,
            signing_secret=secret.get_secret_value() if secret else None,
            request_verification_enabled=secret is not None,
            logger=log,
        )
        self._limiter = KeyedLimiter(settings.slack_channel_messages_per_second)
        # Deliveries get a client without slack_sdk's 429 retries: a retry would resend
        # outside the per-channel spacing (close behind the next post). A 429 goes back to
        # the outbox instead, and the row waits Retry-After, then the limiter again.
        sender = AsyncWebClient(token=token, base_url=settings.slack_api_url)
        self.messenger = SlackMessenger(sender, self.key, self._limiter)
        self._seen_events: OrderedDict[str, None] = OrderedDict()
        self._runner: web.AppRunner | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self.app.middleware(self._once_per_event)
        self.app.command(SLASH_COMMAND)(self._on_command)
        self.app.action(re.compile(r"^pw_"))(self._on_button)
        self.app.view(CALLBACK_ID)(self._on_ask_submitted)
        self.app.event("app_home_opened")(self._on_home_opened)
        self.app.event("message")(self._on_message)

    async def start(self, *, receive_updates: bool = True) -> None:
        mode = self._settings.slack_receive_mode() if receive_updates else "send-only"
        await self._check_tokens(socket_mode=receive_updates)
        if not receive_updates:
            return
        if mode == "socket" and self._settings.slack_app_token is not None:
            self._socket = AsyncSocketModeHandler(
                self.app, self._settings.slack_app_token.get_secret_value()
            )
            await self._socket.connect_async()
            log.info("slack adapter started mode=socket")
            return
        self._runner = web.AppRunner(self.app.web_app(path="/slack/events"))
        await self._runner.setup()
        host, port = self._settings.slack_http_host, self._settings.slack_http_port
        try:
            await web.TCPSite(self._runner, host, port).start()
        except OSError as exc:  # the port is taken, or not ours to open
            line = cannot_listen("Slack's HTTP mode", host, port, exc, "SLACK_HTTP_PORT")
            raise StartupError(line) from None
        log.info("slack adapter started mode=http port=%s", self._settings.slack_http_port)

    async def _check_tokens(self, *, socket_mode: bool) -> None:
        """Refused tokens, or a Slack API that cannot be reached, stop the start with a clear
        line. (slack_sdk would retry a refused app token every 10 s for ever, and the bot
        would hang before it started.)"""
        try:
            await self.client.auth_test()
        except SlackApiError as exc:
            error = exc.response.get("error")
            raise StartupError(f"Slack refused SLACK_BOT_TOKEN ({error})") from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise StartupError(self._unreachable(exc)) from None
        app_token = self._settings.slack_app_token
        if not socket_mode or app_token is None:
            return
        try:
            await self.client.apps_connections_open(app_token=app_token.get_secret_value())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise StartupError(self._unreachable(exc)) from None
        except SlackApiError as exc:
            error = exc.response.get("error")
            raise StartupError(
                f"Slack refused SLACK_APP_TOKEN ({error}); it must be an app-level token"
                " (xapp-...) with the connections:write scope"
            ) from None

    def _unreachable(self, exc: Exception) -> str:
        """The one line for a Slack API that cannot be reached (slack_sdk has retried once)."""
        reason = "no answer in time" if isinstance(exc, TimeoutError) else connect_failure(exc)
        if isinstance(exc, aiohttp.ClientProxyConnectionError) and self.client.proxy:
            reason = f"the proxy {host_of(self.client.proxy)}: {reason}"
        # slack_sdk reads HTTPS_PROXY (or HTTP_PROXY), not NO_PROXY.
        return unreachable(
            "Slack", self._settings.slack_api_url, reason, "SLACK_API_URL", proxy="HTTPS_PROXY"
        )

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
        if self._runner is not None:
            await self._runner.cleanup()

    # --- requests --------------------------------------------------------------------

    async def _once_per_event(
        self, body: dict[str, Any], next: Callable[[], Awaitable[Any]]
    ) -> Any:
        """Events API retries (X-Slack-Retry-Num) of an event already seen are acknowledged
        and dropped."""
        event_id = body.get("event_id")
        if isinstance(event_id, str):
            if event_id in self._seen_events:
                log.info("slack event retried, already handled event=%s", event_id)
                return BoltResponse(status=200, body="")
            self._seen_events[event_id] = None
            while len(self._seen_events) > 10_000:
                self._seen_events.popitem(last=False)
        return await next()

    def _to_command(self, payload: dict[str, Any], button: Button | None = None) -> Command | None:
        return to_command(
            payload,
            admins_only=self._settings.slack_admins_only,
            allowed_users=self._settings.slack_allowed_users,
            button=button,
        )

    def _lookup(self, user: str) -> RoleLookup:
        """Workspace admins and owners (users.info) administer every channel."""

        async def lookup() -> Role:
            info = await self.client.users_info(user=user)
            profile = info.get("user") or {}
            return Role.ADMIN if profile.get("is_admin") or profile.get("is_owner") else Role.MEMBER

        return lookup

    async def _on_command(
        self, ack: Callable[..., Awaitable[None]], command: dict[str, Any]
    ) -> None:
        await ack()  # within Slack's 3 seconds; the work happens after
        where = origin(command)
        parsed = self._to_command(command)
        if parsed is None:
            reply = Reply.text(f"Try `{SLASH_COMMAND} help`.", is_error=True)
        else:
            lookup = self._lookup(where.user)
            reply = await self._registry.dispatch(parsed, self._ctx, lookup_role=lookup)
        await self._answer(where.chat, where.where, where.user, reply, command.get("response_url"))
        if not where.is_channel and reply.changes_chat:
            await self.publish_home(where.team, where.user)

    async def _answer(
        self, ref: ChatRef, channel: str, user: str, reply: Reply, response_url: Any = None
    ) -> None:
        """In the channel when the channel changed; otherwise only to the person. In a
        channel the app is not a member of, to the person through `response_url`."""
        if reply.is_empty:
            return
        messages = render(reply, lambda b: buttons.encode(b, ref.external_id, self.key))
        for message in messages:
            try:
                async with self._limiter(channel):
                    if reply.changes_chat and not channel.startswith("D"):
                        await self.client.chat_postMessage(channel=channel, **message)
                    else:
                        await self.client.chat_postEphemeral(channel=channel, user=user, **message)
            except SlackApiError as exc:
                error = exc.response.get("error")
                log.warning("slack reply failed channel=%s: %s", channel, error)
                if error in _NOT_IN_CHANNEL and isinstance(response_url, str) and response_url:
                    await self._respond(response_url, reply)
                return
        if reply.chart is not None and channel.startswith("D"):
            # Files cannot be ephemeral: charts go only to a person's own DM with the app.
            png = await momentum_chart(self._ctx, reply.chart)
            if png is not None:
                try:
                    await self.client.files_upload_v2(
                        channel=channel, content=png, filename="momentum.png", title="Momentum"
                    )
                except SlackApiError as exc:
                    log.warning("slack chart upload failed: %s", exc.response.get("error"))

    async def _respond(self, response_url: str, reply: Reply) -> None:
        """The reply, to the person alone, where the app may not post: its buttons left out
        (what they do could not be posted either), and what to do first."""
        told = replace(reply, lines=(NOT_IN_CHANNEL, *reply.lines), buttons=())
        webhook = AsyncWebhookClient(response_url, proxy=self.client.proxy)
        for message in render(told):
            try:
                await webhook.send(**message, response_type="ephemeral")
            except (aiohttp.ClientError, TimeoutError) as exc:
                log.warning("slack response_url failed: %s", exc)
                return

    async def _on_button(self, ack: Callable[..., Awaitable[None]], body: dict[str, Any]) -> None:
        await ack()
        where = origin(body)
        actions = body.get("actions") or [{}]
        value = str(actions[0].get("value") or "")
        button = buttons.decode(value, where.chat.external_id, self.key)
        command = self._to_command(body, button) if button is not None else None
        if command is not None and button is not None and button.action is Action.ASK:
            await self._open_ask(body, where, value, button.arg)
            return
        if command is None:
            reply = Reply.text("This button is not valid here; nothing was changed.", is_error=True)
            await self._answer(where.chat, where.where, where.user, reply)
            return
        lookup = self._lookup(where.user)
        reply = await self._registry.dispatch(command, self._ctx, lookup_role=lookup)
        await self._answer(where.chat, where.where, where.user, reply, body.get("response_url"))
        if not where.is_channel:
            await self.publish_home(where.team, where.user)

    async def _open_ask(self, body: dict[str, Any], where: Origin, payload: str, tag: str) -> None:
        """The "Ask about" form (`ask_modal`); the topic's name, or why there is none."""
        name = await topic_name(where.chat, tag, self._ctx)
        if name is None:
            await self._answer(where.chat, where.where, where.user, Reply.text(GONE))
            return
        try:
            view = ask_view(name, where, payload)
            await self.client.views_open(trigger_id=str(body.get("trigger_id", "")), view=view)
        except SlackApiError as exc:
            log.warning("slack ask form not opened: %s", exc.response.get("error"))
            hint = f"I could not open the form; type {SLASH_COMMAND} ask {name}: <question>"
            await self._answer(where.chat, where.where, where.user, Reply.text(hint))

    async def _on_ask_submitted(
        self, ack: Callable[..., Awaitable[None]], body: dict[str, Any]
    ) -> None:
        """A submitted "Ask about" form: /ask, answered where its button was pressed."""
        submitted = read_submission(body, self.key)
        if not submitted.question.strip():
            await ack(response_action="errors", errors={"question": EMPTY})
            return
        await ack()
        where = submitted.where
        if submitted.command is None:
            reply = Reply.text(INVALID, is_error=True)
        else:
            reply = await self._registry.dispatch(submitted.command, self._ctx)
        await self._answer(where.chat, where.where, where.user, reply)

    async def _on_message(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """A file shared with the app (a BibTeX list to follow papers like, `...files`), or
        text typed in a DM (no command: answered as such); nothing else is for the app."""
        if (dm := typed_in_dm(event, body)) is not None:
            reply = not_a_command(dm[1], self._registry)
            return await self._answer(dm[0].chat, dm[0].where, dm[0].user, reply)
        file = shared_file(event)
        payload = follow_payload(event, body)
        command = self._to_command(payload) if file is not None else None
        if file is None or command is None:
            return
        where = origin(payload)
        data = await read_shared(file, self._settings, self.client.proxy)
        made = bibtex_command(data, command) if isinstance(data, bytes) else data
        if isinstance(made, Reply):
            reply = made
        else:
            lookup = self._lookup(where.user)
            reply = await self._registry.dispatch(made, self._ctx, lookup_role=lookup)
        await self._answer(where.chat, where.where, where.user, reply)

    async def _on_home_opened(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        if event.get("tab", "home") == "home":
            await self.publish_home(body.get("team_id", ""), event["user"])

    async def publish_home(self, team: str, user: str) -> None:
        """The person's Home tab: what they follow and mute, and how papers reach them."""
        ref = ChatRef(Platform.SLACK, chat_key(team, None, user))
        try:
            view = home_view(await overview(ref, self._ctx))
        except Exception:
            log.exception("slack home tab not built user=%s", user)
            return
        try:
            await self.client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log.warning("slack home tab not published user=%s: %s", user, exc.response.get("error"))
