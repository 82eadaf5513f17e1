"""Composing the long-running bot: database, catalog, adapters, scheduler on one loop.

Everything long-lived is opened here at start-up, passed down, and closed at
shutdown. `bot.cli` builds the Settings and calls in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import TextIO

from sqlalchemy.exc import SQLAlchemyError

from bot.adapters.console import ConsoleMessenger, run_console
from bot.adapters.slack.adapter import SlackAdapter
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.arxiv.client import ArxivClient
from bot.arxiv.poller import Poller
from bot.config import Settings, StartupError
from bot.delivery.messenger import Messenger
from bot.delivery.peers import Peers, Share
from bot.delivery.worker import Deliverer
from bot.ingest import load_sample_if_empty
from bot.scheduler import Jobs, build_scheduler
from bot.topics.catalog import Catalog, CatalogError, load_catalog
from bot.topics.tagging import catalog_rules
from handlers.base import Context
from handlers.commands import REGISTRY
from handlers.rate_limit import CommandRateLimit
from storage.database import Database
from storage.politeness import DatabaseRequestStamp

log = logging.getLogger(__name__)


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


def build_poller(settings: Settings, db: Database, catalog: Catalog) -> Poller:
    return Poller(
        ArxivClient(settings, stamp=DatabaseRequestStamp(db.uow)),
        db.uow,
        settings.arxiv_categories,
        oai_url=settings.arxiv_oai_url,
        catalog=catalog,
        timeout=settings.arxiv_poll_timeout,
    )


async def wait_for_stop() -> None:
    """Until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def run_bot(
    settings: Settings, *, role: str = "all", stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> int:
    """The bot: chat adapters, the arXiv poller and the outbox worker on one loop.

    Without chat tokens (and in role "all") the chat is this terminal, until end of
    input; otherwise it runs until SIGINT/SIGTERM.
    """
    catalog = open_catalog()
    db = await open_database(settings)
    ctx = Context(
        uow=db.uow,
        catalog=catalog,
        max_topics_per_chat=settings.max_topics_per_chat,
        max_queries_per_chat=settings.max_queries_per_chat,
        rate_limit=CommandRateLimit(
            per_user=settings.user_commands_per_minute,
            per_chat=settings.chat_commands_per_minute,
            burst=settings.command_burst,
        ),
    )
    console = role == "all" and not (settings.telegram_enabled or settings.slack_enabled)
    messengers: dict[str, Messenger] = {}
    adapters: list[TelegramAdapter | SlackAdapter] = []
    telegram: TelegramAdapter | None = None
    if console:
        messengers["console"] = ConsoleMessenger(stdout)
        await load_sample_if_empty(db.uow, catalog)
    if settings.telegram_enabled:
        telegram = TelegramAdapter(settings, REGISTRY, ctx)
        messengers["telegram"] = telegram.messenger
        adapters.append(telegram)
    if settings.slack_enabled:
        slack = SlackAdapter(settings, REGISTRY, ctx)
        messengers["slack"] = slack.messenger
        adapters.append(slack)
    poller = build_poller(settings, db, catalog) if role in ("all", "poller") else None
    process_id = uuid.uuid4().hex  # in the processes table, and on each claim it makes
    deliverer = (
        Deliverer(
            db.uow,
            messengers,
            catalog,
            lease=timedelta(seconds=settings.delivery_lease),
            give_up_after=timedelta(seconds=settings.delivery_give_up_after),
            process_id=process_id,
        )
        if role in ("all", "worker")
        else None
    )

    def take(share: Share) -> None:
        if deliverer is not None:
            deliverer.share = (share.slot, share.workers)
        if telegram is not None:
            telegram.limiter.share(share.rate)

    peers = Peers(
        db.uow,
        role,
        interval=settings.heartbeat_interval,
        overall=settings.telegram_messages_per_second,
        on_share=take,
        process_id=process_id,
    )
    scheduler = build_scheduler(
        Jobs(db, poller, deliverer, catalog, peers=peers),
        role=role,
        deliver_interval=settings.deliver_interval,
        heartbeat_interval=settings.heartbeat_interval,
    )
    try:
        await peers.beat()
        for adapter in adapters:
            # Chat updates go to one process (all/poller); workers only send.
            await adapter.start(receive_updates=role != "worker")
        scheduler.start()
        log.info("paperwatch running role=%s adapters=%s", role, ",".join(messengers) or "none")
        if console:
            await run_console(REGISTRY, ctx, stdin, stdout, interactive=stdin.isatty())
        else:
            await wait_for_stop()
    finally:
        if scheduler.running:
            scheduler.shutdown(wait=False)
        for adapter in adapters:
            await adapter.stop()
        if poller is not None:
            await poller.aclose()
        try:
            await peers.leave()
        except (OSError, SQLAlchemyError) as exc:
            log.warning("could not unregister; the others forget this process soon: %s", exc)
        await db.dispose()
    return 0
