"""Composing the long-running bot: database, catalog, adapters, scheduler on one loop.

Everything long-lived is opened here at start-up, passed down, and closed at
shutdown. Each long-lived part is an async context manager, entered on one
`contextlib.AsyncExitStack` in start-up order: teardown runs in the reverse order by
construction, and a start-up that fails half-way closes exactly what it had opened.
`bot.cli` builds the Settings and calls in.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy.exc import SQLAlchemyError

from bot.adapters.console import LOG_FILE, ConsoleMessenger, Prompt, run_console
from bot.adapters.llm import answer_writer
from bot.arxiv.by_id import paper_lookup
from bot.arxiv.client import ArxivClient
from bot.config import Settings, StartupError
from bot.liveness import Liveness
from bot.log_secrets import logging_to_file
from bot.metrics import Metrics
from bot.ports import AnswerWriter, Messenger
from bot.scheduler import Jobs, build_scheduler
from bot.services.deliver import Deliverer
from bot.services.ingest import load_sample_if_empty
from bot.services.peers import Peers, Share
from bot.services.poll import Poller
from bot.topics.catalog import Catalog, CatalogError, load_catalog
from bot.topics.tag_rules import catalog_rules
from handlers.base import Context
from handlers.rate_limit import CommandRateLimit
from handlers.registry import REGISTRY
from storage.database import Database
from storage.politeness import DatabaseRequestStamp
from storage.readiness import Readiness

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the platform SDKs are imported only by a process that runs an adapter
    from bot.adapters.slack.adapter import SlackAdapter
    from bot.adapters.telegram.adapter import TelegramAdapter

    Adapter = TelegramAdapter | SlackAdapter


async def open_database(settings: Settings, *, migrate: bool = True) -> Database:
    """Open the database and bring its schema up to date."""
    db = Database(settings.database_url)
    if migrate:
        try:
            await db.upgrade()
        except (OSError, SQLAlchemyError) as exc:
            await db.dispose()
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise StartupError(f"cannot open the database: {reason}") from exc
    return db


@contextlib.asynccontextmanager
async def database(settings: Settings, *, migrate: bool = True) -> AsyncIterator[Database]:
    """`open_database`, disposed of (engine and poller lock) on the way out."""
    db = await open_database(settings, migrate=migrate)
    try:
        yield db
    finally:
        await db.dispose()


def open_catalog(path: Path | None = None) -> Catalog:
    """The catalog at `path` (the bundled one when None), every rule compiled; a broken
    catalog stops the start with every problem `load_catalog` found, before anything
    (the database above all) is touched."""
    try:
        catalog = load_catalog(path)
    except CatalogError as exc:
        raise StartupError(f"the topic catalog is broken: {exc}") from exc
    catalog_rules(catalog)  # compiled once now (load_catalog has checked that they compile)
    return catalog


def build_poller(
    settings: Settings, db: Database, catalog: Catalog, metrics: Metrics | None = None
) -> Poller:
    return Poller(
        ArxivClient(settings, stamp=DatabaseRequestStamp(db.uow)),
        db.uow,
        settings.arxiv_categories,
        oai_url=settings.arxiv_oai_url,
        catalog=catalog,
        timeout=settings.arxiv_poll_timeout,
        metrics=metrics,
    )


@contextlib.asynccontextmanager
async def registered(peers: Peers) -> AsyncIterator[Peers]:
    """This process in the processes table (its first heartbeat) until it leaves."""
    await peers.beat()
    try:
        yield peers
    finally:
        try:
            await peers.leave()
        except (OSError, SQLAlchemyError) as exc:
            log.warning("could not unregister; the others forget this process soon: %s", exc)


@contextlib.asynccontextmanager
async def started(adapter: Adapter, *, receive_updates: bool) -> AsyncIterator[Adapter]:
    """A chat adapter connected; stopped on the way out, a half-made start included."""
    try:
        await adapter.start(receive_updates=receive_updates)
        yield adapter
    finally:
        await adapter.stop()


@contextlib.asynccontextmanager
async def ops_endpoint(
    settings: Settings, db: Database, scheduler: AsyncIOScheduler, metrics: Metrics
) -> AsyncIterator[int | None]:
    """The ops endpoint (`bot.ops`) on its port while the bot runs, when
    PAPERWATCH_OPS_PORT is set (yields the port); nothing at all otherwise."""
    if settings.ops_port is None:
        yield None
        return
    from bot.ops import Checks, serving  # aiohttp only where the endpoint is on

    stale = settings.ops_stale_after
    liveness = Liveness(scheduler, stale_after=stale, bounds={"heartbeat": stale})
    checks = Checks(
        live=liveness.problem,
        ready=Readiness(db).problem,
        metrics=functools.partial(metrics.exposition, db.uow),
    )
    async with serving(checks, settings.ops_host, settings.ops_port) as port:
        yield port


@contextlib.asynccontextmanager
async def running(scheduler: AsyncIOScheduler) -> AsyncIterator[AsyncIOScheduler]:
    """The scheduler's jobs on this loop; running jobs are not waited for at shutdown."""
    scheduler.start()
    try:
        yield scheduler
    finally:
        if scheduler.running:
            scheduler.shutdown(wait=False)


async def wait_for_stop() -> None:
    """Until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def command_context(
    settings: Settings, db: Database, catalog: Catalog, writer: AnswerWriter | None = None
) -> Context:
    """What chat commands run with: the database, the catalog, the limits, /ask's model."""
    return Context(
        uow=db.uow,
        catalog=catalog,
        max_topics_per_chat=settings.max_topics_per_chat,
        max_queries_per_chat=settings.max_queries_per_chat,
        rate_limit=CommandRateLimit(
            per_user=settings.user_commands_per_minute,
            per_chat=settings.chat_commands_per_minute,
            burst=settings.command_burst,
        ),
        answer_writer=writer,
        llm_daily_tokens=settings.llm_daily_tokens,
    )


def build_adapters(settings: Settings, ctx: Context) -> dict[str, Adapter]:
    """The chat adapters the settings enable, by platform name (none yet started)."""
    adapters: dict[str, Adapter] = {}
    if settings.telegram_enabled:
        from bot.adapters.telegram.adapter import TelegramAdapter

        adapters["telegram"] = TelegramAdapter(settings, REGISTRY, ctx)
    if settings.slack_enabled:
        from bot.adapters.slack.adapter import SlackAdapter

        adapters["slack"] = SlackAdapter(settings, REGISTRY, ctx)
    return adapters


def build_deliverer(
    settings: Settings,
    db: Database,
    messengers: dict[str, Messenger],
    catalog: Catalog,
    process_id: str,
    metrics: Metrics | None = None,
) -> Deliverer:
    return Deliverer(
        db.uow,
        messengers,
        catalog,
        lease=timedelta(seconds=settings.delivery_lease),
        give_up_after=timedelta(seconds=settings.delivery_give_up_after),
        process_id=process_id,
        metrics=metrics,
    )


def build_peers(
    settings: Settings,
    db: Database,
    role: str,
    process_id: str,
    deliverer: Deliverer | None,
    adapters: dict[str, Adapter],
    metrics: Metrics | None = None,
) -> Peers:
    """This process among the live ones; each beat's share sets the delivery slot and rate."""
    telegram = cast("TelegramAdapter | None", adapters.get("telegram"))

    def take(share: Share) -> None:
        if deliverer is not None:
            deliverer.share = (share.slot, share.workers)
        if telegram is not None:
            telegram.limiter.share(share.rate)

    return Peers(
        db.uow,
        role,
        interval=settings.heartbeat_interval,
        overall=settings.telegram_messages_per_second,
        on_share=take,
        process_id=process_id,
        metrics=metrics,
    )


def _chats_for_role(settings: Settings, role: str) -> bool:
    """Whether a chat platform is configured; a role other than "all" needs one."""
    chats = settings.telegram_enabled or settings.slack_enabled
    if role != "all" and not chats:  # a worker would deliver nowhere, a poller answer nobody
        raise StartupError(
            f"a {role} process serves Telegram or Slack, and neither is configured: set "
            "TELEGRAM_BOT_TOKEN or SLACK_BOT_TOKEN (see .env.example), or run `paperwatch "
            "run` without --role to chat in this terminal"
        )
    return chats


async def _enter_jobs(
    stack: contextlib.AsyncExitStack,
    settings: Settings,
    db: Database,
    catalog: Catalog,
    role: str,
    adapters: dict[str, Adapter],
    messengers: dict[str, Messenger],
    metrics: Metrics,
) -> AsyncIOScheduler:
    """The services this role runs (deliverer, peers, poller) and its jobs' shutdown,
    entered on `stack`, and the scheduler of the jobs, built but not yet started."""
    process_id = uuid.uuid4().hex  # in the processes table, and on each claim it makes
    deliverer = None
    if role in ("all", "worker"):
        deliverer = build_deliverer(settings, db, messengers, catalog, process_id, metrics)
    peers = build_peers(settings, db, role, process_id, deliverer, adapters, metrics)
    await stack.enter_async_context(registered(peers))
    poller = None
    if role in ("all", "poller"):
        poller = await stack.enter_async_context(
            contextlib.aclosing(build_poller(settings, db, catalog, metrics))
        )
    jobs = Jobs(db, poller, deliverer, catalog, peers=peers)
    stack.push_async_callback(jobs.stop)  # after the scheduler's shutdown, before the rest
    return build_scheduler(
        jobs,
        role=role,
        deliver_interval=settings.deliver_interval,
        heartbeat_interval=settings.heartbeat_interval,
        fast_poll_interval=settings.arxiv_fast_poll_interval,
    )


async def run_bot(
    settings: Settings, *, role: str = "all", stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> int:
    """The bot: chat adapters, the arXiv poller and the outbox worker on one loop.

    Without chat tokens (and in role "all") the chat is this terminal, until end of
    input; otherwise it runs until SIGINT/SIGTERM. While the chat has a terminal, the
    log goes to `LOG_FILE`, not into its prompt.
    """
    chats = _chats_for_role(settings, role)
    catalog = open_catalog(settings.catalog)
    console = role == "all" and not chats
    interactive = console and stdin.isatty()
    async with contextlib.AsyncExitStack() as stack:
        log_file = stack.enter_context(logging_to_file(LOG_FILE)) if interactive else None
        writer = await stack.enter_async_context(answer_writer(settings))
        db = await stack.enter_async_context(database(settings))
        stamp = DatabaseRequestStamp(db.uow)  # arXiv's spacing, across processes
        lookup = await stack.enter_async_context(paper_lookup(settings, stamp))
        ctx = replace(command_context(settings, db, catalog, writer), paper_lookup=lookup)
        adapters = build_adapters(settings, ctx)
        messengers: dict[str, Messenger] = {n: a.messenger for n, a in adapters.items()}
        prompt = Prompt(stdout, interactive=interactive)
        if console:
            messengers["console"] = ConsoleMessenger(stdout, prompt)
            await load_sample_if_empty(db.uow, catalog)
        metrics = Metrics()
        scheduler = await _enter_jobs(
            stack, settings, db, catalog, role, adapters, messengers, metrics
        )
        await stack.enter_async_context(ops_endpoint(settings, db, scheduler, metrics))
        for adapter in adapters.values():
            # Chat updates go to one process (all/poller); workers only send.
            await stack.enter_async_context(started(adapter, receive_updates=role != "worker"))
        await stack.enter_async_context(running(scheduler))
        log.info("paperwatch running role=%s adapters=%s", role, ",".join(messengers) or "none")
        if console:
            await run_console(
                REGISTRY,
                ctx,
                stdin,
                stdout,
                interactive=interactive,
                log_file=log_file,
                prompt=prompt,
            )
        else:
            await wait_for_stop()
    return 0
