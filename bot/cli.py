"""The `paperwatch` command: the composition root.

Settings are built here, once; the database, catalog and adapters are built from
them and passed down. Nothing below this module reads the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pydantic import ValidationError
from rich.progress import Progress
from sqlalchemy.exc import SQLAlchemyError

from bot.adapters.console import CONSOLE_CHAT, render_reply, run_console
from bot.arxiv.client import ArxivClient, ArxivHTTPError
from bot.arxiv.parse import FeedError, parse_feed
from bot.arxiv.poller import Poller, PollOutcome
from bot.config import Settings
from bot.domain import Command
from bot.ingest import IngestResult, load_sample_if_empty, store_papers
from bot.scheduler import build_scheduler
from bot.topics.catalog import CatalogError, load_catalog
from handlers.base import Context
from handlers.commands import REGISTRY
from storage.database import Database, DatabaseConfigError

log = logging.getLogger("paperwatch")

Action = Callable[[argparse.Namespace, Settings], Awaitable[int]]


class StartupError(RuntimeError):
    """Something a person must fix before paperwatch can start; one line, no traceback."""


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # Third-party chatter stays out of INFO logs.
    for noisy in ("httpx", "httpcore", "aiosqlite", "alembic.runtime.migration"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))


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


def build_context(db: Database) -> Context:
    try:
        catalog = load_catalog()
    except CatalogError as exc:
        raise StartupError(f"the topic catalog is broken: {exc}") from exc
    return Context(uow=db.uow, catalog=catalog)


async def cmd_console(args: argparse.Namespace, settings: Settings) -> int:

    db = await open_database(settings)
    try:
        ctx = build_context(db)
        await load_sample_if_empty(db.uow)
        await run_console(REGISTRY, ctx, sys.stdin, sys.stdout, interactive=sys.stdin.isatty())
    finally:
        await db.dispose()
    return 0


async def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    """The long-running bot: scheduler and chat adapters on one asyncio loop."""
    if settings.telegram_enabled or settings.slack_enabled:
        raise StartupError(
            "chat tokens are set, but this version has only the terminal chat; "
            "unset TELEGRAM_BOT_TOKEN / SLACK_BOT_TOKEN or use `paperwatch console`"
        )
    db = await open_database(settings)
    poller = build_poller(settings, db)
    scheduler = build_scheduler(poller)
    try:
        ctx = build_context(db)
        await load_sample_if_empty(db.uow)
        scheduler.start()
        await run_console(REGISTRY, ctx, sys.stdin, sys.stdout, interactive=sys.stdin.isatty())
    finally:
        if scheduler.running:
            scheduler.shutdown(wait=False)
        await poller.aclose()
        await db.dispose()
    return 0


def build_poller(settings: Settings, db: Database) -> Poller:

    return Poller(
        ArxivClient(settings), db.uow, settings.arxiv_categories, oai_url=settings.arxiv_oai_url
    )


async def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:

    db = await open_database(settings)
    try:
        if not args.file:
            poller = build_poller(settings, db)
            try:
                outcome = await poller.poll_daily()
            finally:
                await poller.aclose()
            if outcome.status == "failed":
                raise StartupError(f"arXiv poll failed: {outcome.error}")
            print(_describe_poll(outcome))
            return 0
        for path in args.file:
            try:
                feed = parse_feed(_read(path))
            except FeedError as exc:
                raise StartupError(f"{path}: {exc}") from exc
            result = await store_papers(db.uow, feed.papers)
            print(f"{path}: {len(feed.papers)} papers read; {_describe_result(result)}.")
    finally:
        await db.dispose()
    return 0


def _describe_result(result: IngestResult) -> str:
    text = (
        f"{len(result.new)} new, {len(result.updated)} updated, {result.unchanged} already stored"
    )
    if result.late:
        text += f", {result.late} replacement(s) of papers not seen before (not counted as new)"
    return text


def _describe_poll(outcome: PollOutcome) -> str:
    if outcome.status == "no_mailing":
        return "arXiv's feed holds no mailing right now (normal on weekends and holidays)."
    if outcome.status == "unchanged":
        return "arXiv's feed has not changed since the last poll."
    return (
        f"arXiv listing of {outcome.announced}: {outcome.new} new papers, "
        f"{outcome.updated} updated."
    )


async def cmd_backfill(args: argparse.Namespace, settings: Settings) -> int:

    db = await open_database(settings)
    poller = build_poller(settings, db)
    today = datetime.now(UTC).date()
    first = today - timedelta(days=args.days)
    try:
        with Progress(transient=False) as progress:
            task = progress.add_task("backfill", total=args.days + 1)
            new = 0

            def on_day(day: date, result: IngestResult) -> None:
                nonlocal new
                new += len(result.new)
                progress.update(task, advance=1, description=f"{day} +{len(result.new)} new")

            totals = await poller.harvest(first, today, on_day=on_day)
    except (ArxivHTTPError, FeedError) as exc:
        raise StartupError(f"backfill stopped (run it again to resume): {exc}") from exc
    finally:
        await poller.aclose()
        await db.dispose()
    print(f"Backfill {first}..{today}: {_describe_result(totals)}.")
    return 0


async def cmd_status(args: argparse.Namespace, settings: Settings) -> int:

    db = await open_database(settings)
    try:
        reply = await REGISTRY.dispatch(Command("status", "", CONSOLE_CHAT), build_context(db))
        print(render_reply(reply))
    finally:
        await db.dispose()
    return 0


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise StartupError(f"cannot read {path}: {exc.strerror or exc}") from exc


async def cmd_db(args: argparse.Namespace, settings: Settings) -> int:
    db = await open_database(settings, migrate=args.action == "upgrade")
    try:
        print(f"database schema at revision {await db.current_revision() or '(empty)'}")
    finally:
        await db.dispose()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paperwatch",
        description="Follow arXiv topics from a chat: alerts, digests and momentum.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, action: Action, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=action)
        return p

    add("run", cmd_run, "run the bot (migrates the database first)")
    add("console", cmd_console, "chat with the bot in this terminal")
    ingest = add("ingest", cmd_ingest, "store papers from arXiv, or from saved responses")
    ingest.add_argument(
        "--file", type=Path, action="append", help="a saved arXiv RSS/Atom/OAI response"
    )
    backfill = add("backfill", cmd_backfill, "fill the last N days from arXiv's OAI-PMH")
    backfill.add_argument("--days", type=_days, default=56, help="how far back (default 56)")
    add("status", cmd_status, "when arXiv was last ingested, and when the next mailing is due")
    db = add("db", cmd_db, "database schema: upgrade, or show the current revision")
    db.add_argument("action", choices=["upgrade", "current"])
    return parser


def _days(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 3650:
        raise argparse.ArgumentTypeError("days must be between 1 and 3650")
    return value


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            print(f"paperwatch: bad setting {where}: {error['msg']}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    try:
        return asyncio.run(args.handler(args, settings))
    except (StartupError, DatabaseConfigError) as exc:
        print(f"paperwatch: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
