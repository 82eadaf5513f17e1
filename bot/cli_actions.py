"""What each `paperwatch` command does, given its parsed arguments and the Settings.

`bot.cli` parses the arguments and builds the Settings; each `cmd_*` here is the action
a subcommand runs. `opened` opens what a command needs (catalog, database, arXiv) from
the Settings and closes it afterwards; the work itself is in the services
(`bot.services.ingest`, `bot.services.poll`, the chat commands) and `bot.app` runs the bot.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from rich.progress import Progress

from bot.adapters.console import CONSOLE_CHAT, LOG_FILE, render_reply, run_console
from bot.adapters.llm import answer_writer
from bot.app import (
    StartupError,
    build_poller,
    command_context,
    database,
    open_catalog,
    run_bot,
)
from bot.arxiv.by_id import paper_lookup
from bot.arxiv.categories import in_categories
from bot.arxiv.parse import FeedError, parse_feed
from bot.arxiv.responses import ArxivHTTPError
from bot.config import Settings
from bot.domain import Command, Reply
from bot.log_secrets import logging_to_file
from bot.ports import AnswerWriter, PaperLookup
from bot.services.ingest import (
    IngestResult,
    load_sample_if_empty,
    read_papers,
    retag,
    store_papers,
)
from bot.services.peers import SILENT_BEATS
from bot.services.poll import Poller, PollOutcome
from bot.topics.catalog import Catalog, CatalogError, load_catalog
from bot.topics.resolve import search
from bot.topics.tag_rules import build_tagger
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.backup import BackupError, backup_sqlite, pg_dump_command, sqlite_file
from storage.database import Database
from storage.politeness import DatabaseRequestStamp

log = logging.getLogger("paperwatch")


def build_context(
    db: Database,
    catalog: Catalog,
    settings: Settings | None = None,
    writer: AnswerWriter | None = None,
    lookup: PaperLookup | None = None,
) -> Context:
    """What terminal commands run with: the bot's (`bot.app.command_context`) without its
    command rate limit, since one operator types them."""
    if settings is None:
        return Context(uow=db.uow, catalog=catalog)
    ctx = command_context(settings, db, catalog, writer)
    return replace(ctx, rate_limit=None, paper_lookup=lookup)


def lookup_for(settings: Settings, db: Database) -> contextlib.AbstractAsyncContextManager:
    """arXiv's papers by id (`bot.arxiv.by_id`), spaced through the database's stamp."""
    return paper_lookup(settings, DatabaseRequestStamp(db.uow))


@dataclass(frozen=True, slots=True)
class Opened:
    """What a command works with: the database, the catalog, and arXiv when asked for."""

    db: Database
    catalog: Catalog
    poller: Poller | None = None
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)


@contextlib.asynccontextmanager
async def opened(
    settings: Settings, *, catalog: Path | None = None, arxiv: bool = False
) -> AsyncIterator[Opened]:
    """The catalog (a broken one is refused before the database is touched), the migrated
    database and, with `arxiv`, the poller; closed in reverse on the way out."""
    topics = open_catalog(catalog or settings.catalog)
    async with contextlib.AsyncExitStack() as stack:
        db = await stack.enter_async_context(database(settings))
        poller = None
        if arxiv:
            poller = await stack.enter_async_context(
                contextlib.aclosing(build_poller(settings, db, topics))
            )
        yield Opened(db, topics, poller, stack)


async def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    interactive = sys.stdin.isatty()
    with logging_to_file(LOG_FILE) if interactive else contextlib.nullcontext() as log_file:
        async with answer_writer(settings) as writer, opened(settings) as it:
            await load_sample_if_empty(it.db.uow, it.catalog)
            lookup = await it.stack.enter_async_context(lookup_for(settings, it.db))
            ctx = build_context(it.db, it.catalog, settings, writer, lookup)
            await run_console(
                REGISTRY,
                ctx,
                sys.stdin,
                sys.stdout,
                interactive=interactive,
                log_file=log_file,
            )
    return 0


async def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    """The long-running bot (see bot.app)."""
    return await run_bot(settings, role=args.role)


async def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    """Today's listing from arXiv, or saved responses (--file): either way only the papers
    of ARXIV_CATEGORIES are stored, as a poll would."""
    categories = frozenset(settings.arxiv_categories)
    async with opened(settings, arxiv=not args.file) as it:
        if it.poller is not None:
            outcome = await it.poller.poll_daily()
            if outcome.status == "failed":
                raise StartupError(f"arXiv poll failed: {outcome.error}")
            print(_describe_poll(outcome))
        for path in args.file or ():
            try:
                feed = parse_feed(_read(path))
            except FeedError as exc:
                raise StartupError(f"{path}: {exc}") from exc
            wanted = [p for p in feed.papers if in_categories(p.categories, categories)]
            result = await store_papers(it.db.uow, wanted, it.catalog)
            left_out = len(feed.papers) - len(wanted)
            outside = f", {left_out:,} outside ARXIV_CATEGORIES left out" if left_out else ""
            print(f"{path}: {len(feed.papers):,} papers read{outside}; {result.summary()}.")
    return 0


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
    today = datetime.now(UTC).date()
    first = today - timedelta(days=args.days)
    async with opened(settings, arxiv=True) as it:
        assert it.poller is not None
        with Progress(transient=True) as progress:  # the summary line below replaces it
            task = progress.add_task("backfill", total=args.days + 1)

            def on_day(day: date, result: IngestResult) -> None:
                progress.update(task, advance=1, description=f"{day} +{len(result.new)} new")

            try:
                totals = await it.poller.harvest(first, today, on_day=on_day)
            except (ArxivHTTPError, FeedError) as exc:
                raise StartupError(f"backfill stopped (run it again to resume): {exc}") from exc
    print(f"Backfill {first}..{today}: {totals.summary()}.")
    return 0


async def run_chat_command(
    it: Opened, name: str, args: str = "", *, echo_errors: bool = True
) -> Reply:
    """Run a chat command as the terminal chat and print its answer (an error answer only
    with `echo_errors`: the caller may word it as a command line's error instead)."""
    ctx = build_context(it.db, it.catalog)
    reply = await REGISTRY.dispatch(Command(name, args, CONSOLE_CHAT), ctx)
    if echo_errors or not reply.is_error:
        print(render_reply(reply))
    return reply


async def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    """/status, plus what only an operator needs: the outbox and its dead letters."""
    silence = SILENT_BEATS * timedelta(seconds=settings.heartbeat_interval)
    async with opened(settings) as it:
        await run_chat_command(it, "status")
        async with it.db.uow() as uow:
            counts = await uow.outbox.counts()
            dead = await uow.outbox.dead_letters()
            live = await uow.processes.live(datetime.now(UTC) - silence)
    queued = ", ".join(f"{n:,} {status}" for status, n in sorted(counts.items()))
    print(f"Outbox rows (one per chat and batch, digest or notice): {queued or 'none'}.")
    for item_id, chat_id, kind, error in dead:
        print(f"  dead letter #{item_id} ({kind} to chat {chat_id}): {error}")
    roles = Counter(p.role for p in live)
    running = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
    print(f"Processes running: {f'{len(live)} ({running})' if live else 'none'}.")
    return 0


async def cmd_outbox(args: argparse.Namespace, settings: Settings) -> int:
    """`outbox retry-dead [--id N]`: dead letters (all, or one) are due again now, their
    failures forgotten, so the workers try them afresh."""
    async with database(settings) as db, db.uow() as uow:
        requeued = await uow.outbox.requeue_dead(datetime.now(UTC), args.id)
        await uow.commit()
    if args.id is not None and not requeued:
        print(f"No dead letter #{args.id} (see `paperwatch status` for the dead letters).")
        return 1
    print(f"Requeued {requeued:,} dead letter(s); the workers send them at their next look.")
    return 0


async def cmd_tag(args: argparse.Namespace, settings: Settings) -> int:
    """Tag the papers of a saved response or JSON-lines file; no database needed."""
    catalog = open_catalog(settings.catalog)
    data = _read(args.file)
    try:
        papers = read_papers(data)
    except (FeedError, ValueError) as exc:
        raise StartupError(f"{args.file}: {exc}") from exc
    tagger = build_tagger(catalog)
    names = {t.slug: t.name for t in catalog.topics}
    for paper in papers:
        tags = tagger.tag(paper)
        record = {
            "arxiv_id": paper.arxiv_id,
            "tags": [names[slug] for slug in tags],
            "why": {names[slug]: list(words) for slug, words in tags.items()},
        }
        print(json.dumps(record, ensure_ascii=False))
    return 0


async def cmd_topics(args: argparse.Namespace, settings: Settings) -> int:
    """List the catalog; with --check, only check it: every problem, exit 1 if any."""
    if args.check:
        return check_catalog(args.catalog or settings.catalog)
    catalog = open_catalog(args.catalog or settings.catalog)
    words = " ".join(args.words)
    shown = search(words, catalog, limit=len(catalog)) if words else catalog.topics
    for topic in shown:
        parent = catalog.by_slug(topic.parent) if topic.parent else None
        where = f" (in {parent.name})" if parent else ""
        print(f"{topic.name} [{topic.slug}]{where}: {topic.description}")
    if words and not shown:
        print(f'paperwatch: no topic matches "{words}"; `paperwatch topics` lists them all.')
        return 1
    print(f'{len(shown)} topics matching "{words}"' if words else f"{len(catalog)} topics")
    return 0


def check_catalog(path: Path | None) -> int:
    """`topics --check`: "catalog OK: N topics" (0), or one line per problem (1)."""
    try:
        catalog = load_catalog(path)
    except CatalogError as exc:
        print(exc)
        return 1
    print(f"catalog OK: {len(catalog)} topics")
    return 0


async def cmd_retag(args: argparse.Namespace, settings: Settings) -> int:
    """Re-run every rule over every stored paper (after a catalog change). A broken
    catalog is refused before the database is opened: the stored tags stay as they are."""
    async with opened(settings, catalog=args.catalog) as it:
        with Progress() as progress:
            task = progress.add_task("retag", total=None)
            result = await retag(
                it.db.uow,
                it.catalog,
                on_total=lambda total: progress.update(task, total=total),
                on_page=lambda done: progress.update(task, advance=done),
            )
    print(f"Retagged {result.papers:,} papers with {result.rules} rules: {result.tags:,} tags.")
    return 0


async def cmd_momentum(args: argparse.Namespace, settings: Settings) -> int:
    """The momentum sentence and sparkline of a topic, in the terminal."""
    async with opened(settings) as it:
        reply = await run_chat_command(it, "momentum", " ".join(args.topic), echo_errors=False)
    if not reply.is_error:
        return 0
    print(f"paperwatch: {reply.lines[0]}", file=sys.stderr)
    if reply.buttons:  # the topics it might have meant
        names = "; ".join(row[0].text for row in reply.buttons)
        print(f"  did you mean: {names}?", file=sys.stderr)
    print("  `paperwatch topics WORDS` searches the catalog.", file=sys.stderr)
    return 1


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise StartupError(f"cannot read {path}: {exc.strerror or exc}") from exc


async def cmd_db(args: argparse.Namespace, settings: Settings) -> int:
    """`db upgrade`, `db current`, `db downgrade REVISION`, `db backup PATH [--force]`."""
    if args.action == "backup":
        return await _backup(settings.database_url, args.path, force=args.force)
    async with database(settings, migrate=args.action == "upgrade") as db:
        if args.action == "downgrade":
            await db.downgrade(args.revision)
        print(f"database schema at revision {await db.current_revision() or '(empty)'}")
    return 0


async def _backup(url: str, target: Path, *, force: bool) -> int:
    try:
        source = sqlite_file(url)
        if source is None:  # PostgreSQL: its own tool does it, while the bot runs
            command = pg_dump_command(url, target)
            print("# PostgreSQL is backed up with pg_dump and restored with pg_restore (README).")
            if "PGPASSWORD=" in command:
                print("# Replace PASSWORD, or drop PGPASSWORD= to use ~/.pgpass or a prompt.")
            print(command)
            return 0
        copy = await asyncio.to_thread(backup_sqlite, source, target, force=force)
    except BackupError as exc:
        raise StartupError(str(exc)) from exc
    revision = copy.revision or "(empty)"
    print(f"backed up to {copy.path}: {copy.size:,} bytes, schema at revision {revision}")
    return 0
