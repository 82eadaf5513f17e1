"""The `paperwatch` command: the composition root.

Settings are built here, once; the database, catalog and adapters are built from
them and passed down. Nothing below this module reads the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pydantic import ValidationError
from rich.progress import Progress

from bot.adapters.console import CONSOLE_CHAT, render_reply, run_console
from bot.app import StartupError, build_poller, open_catalog, open_database, run_bot
from bot.arxiv.client import ArxivHTTPError
from bot.arxiv.parse import FeedError, parse_feed
from bot.arxiv.poller import PollOutcome
from bot.config import Settings
from bot.delivery.peers import SILENT_BEATS
from bot.domain import Command, Paper, Reply
from bot.ingest import IngestResult, load_sample_if_empty, paper_from_json, store_papers
from bot.log_secrets import RedactSecrets, keep_secret_bearing_loggers_quiet
from bot.scheduler import ROLES
from bot.topics.catalog import Catalog, CatalogError, load_catalog
from bot.topics.tagging import build_tagger
from handlers.base import Context
from handlers.commands import REGISTRY
from storage.database import Database, DatabaseConfigError

log = logging.getLogger("paperwatch")

RETAG_PAGE = 1000
CATALOG_HELP = "a catalog file to use instead of the bundled bot/topics/catalog.toml"

Action = Callable[[argparse.Namespace, Settings], Awaitable[int]]


def configure_logging(level: str, secrets: Iterable[str] = ()) -> None:
    """Logs to stderr at `level`; tokens and `secrets` never show (bot.log_secrets)."""
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    root = logging.getLogger()
    redact = RedactSecrets(secrets)
    for handler in root.handlers:
        handler.addFilter(redact)
    # Third-party chatter stays out of INFO logs.
    for noisy in ("httpx", "httpcore", "aiosqlite", "alembic.runtime.migration", "apscheduler"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    keep_secret_bearing_loggers_quiet(root.level)


def build_context(db: Database, catalog: Catalog, settings: Settings | None = None) -> Context:
    if settings is None:
        return Context(uow=db.uow, catalog=catalog)
    return Context(
        uow=db.uow,
        catalog=catalog,
        max_topics_per_chat=settings.max_topics_per_chat,
        max_queries_per_chat=settings.max_queries_per_chat,
    )


async def cmd_console(args: argparse.Namespace, settings: Settings) -> int:

    db = await open_database(settings)
    try:
        catalog = open_catalog()
        ctx = build_context(db, catalog, settings)
        await load_sample_if_empty(db.uow, catalog)
        await run_console(REGISTRY, ctx, sys.stdin, sys.stdout, interactive=sys.stdin.isatty())
    finally:
        await db.dispose()
    return 0


async def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    """The long-running bot (see bot.app)."""
    return await run_bot(settings, role=args.role)


async def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:

    catalog = open_catalog()
    db = await open_database(settings)
    try:
        if not args.file:
            poller = build_poller(settings, db, catalog)
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
            result = await store_papers(db.uow, feed.papers, catalog)
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

    catalog = open_catalog()
    db = await open_database(settings)
    poller = build_poller(settings, db, catalog)
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


async def run_chat_command(db: Database, name: str, args: str = "") -> Reply:
    """Run a chat command as the terminal chat and print its answer."""
    ctx = build_context(db, open_catalog())
    reply = await REGISTRY.dispatch(Command(name, args, CONSOLE_CHAT), ctx)
    print(render_reply(reply))
    return reply


async def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    """/status, plus what only an operator needs: the outbox and its dead letters."""
    db = await open_database(settings)
    try:
        await run_chat_command(db, "status")
        silence = SILENT_BEATS * timedelta(seconds=settings.heartbeat_interval)
        async with db.uow() as uow:
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
    finally:
        await db.dispose()
    return 0


async def cmd_outbox(args: argparse.Namespace, settings: Settings) -> int:
    """`outbox retry-dead [--id N]`: dead letters (all, or one) are due again now, their
    failures forgotten, so the workers try them afresh."""
    db = await open_database(settings)
    try:
        async with db.uow() as uow:
            requeued = await uow.outbox.requeue_dead(datetime.now(UTC), args.id)
            await uow.commit()
    finally:
        await db.dispose()
    if args.id is not None and not requeued:
        print(f"No dead letter #{args.id} (see `paperwatch status` for the dead letters).")
        return 1
    print(f"Requeued {requeued:,} dead letter(s); the workers send them at their next look.")
    return 0


async def cmd_tag(args: argparse.Namespace, settings: Settings) -> int:
    """Tag the papers of a saved response or JSON-lines file; no database needed."""
    catalog = open_catalog()
    data = _read(args.file)
    try:
        papers = _papers_from(data)
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


def _papers_from(data: bytes) -> list[Paper]:
    """A saved arXiv response, or JSON lines with arxiv_id, title, abstract, ..."""
    if data.lstrip()[:1] in (b"{", b""):
        papers = []
        for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                papers.append(paper_from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"line {number} is not a paper record: {exc}") from exc
        return papers
    return list(parse_feed(data).papers)


async def cmd_topics(args: argparse.Namespace, settings: Settings) -> int:
    """List the catalog; with --check, only check it: every problem, exit 1 if any."""
    if args.check:
        return check_catalog(args.catalog)
    catalog = open_catalog(args.catalog)
    for topic in catalog.topics:
        parent = catalog.by_slug(topic.parent) if topic.parent else None
        where = f" (in {parent.name})" if parent else ""
        print(f"{topic.name} [{topic.slug}]{where}: {topic.description}")
    print(f"{len(catalog)} topics")
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
    catalog = open_catalog(args.catalog)
    db = await open_database(settings)
    try:
        async with db.uow() as uow:
            total = await uow.papers.count()
            queries = await uow.subscriptions.query_targets()
        tagger = build_tagger(catalog, queries)
        after: str | None = None
        tags = 0
        with Progress() as progress:
            task = progress.add_task("retag", total=total)
            while True:
                async with db.uow() as uow:
                    page = await uow.papers.page(after, RETAG_PAGE)
                    if not page:
                        break
                    triples = [
                        (p.arxiv_id, key, why) for p in page for key, why in tagger.tag(p).items()
                    ]
                    tags += await uow.papers.replace_rule_tags([p.arxiv_id for p in page], triples)
                    await uow.commit()
                after = page[-1].arxiv_id
                progress.update(task, advance=len(page))
    finally:
        await db.dispose()
    print(f"Retagged {total:,} papers with {len(tagger)} rules: {tags:,} tags.")
    return 0


async def cmd_momentum(args: argparse.Namespace, settings: Settings) -> int:
    """The momentum sentence and sparkline of a topic, in the terminal."""
    db = await open_database(settings)
    try:
        reply = await run_chat_command(db, "momentum", " ".join(args.topic))
    finally:
        await db.dispose()
    return 1 if reply.is_error else 0


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

    run = add("run", cmd_run, "run the bot (migrates the database first)")
    run.add_argument(
        "--role",
        choices=ROLES,
        default="all",
        help="all (default); poller: arXiv and digests only; worker: delivery only",
    )
    add("console", cmd_console, "chat with the bot in this terminal")
    ingest = add("ingest", cmd_ingest, "store papers from arXiv, or from saved responses")
    ingest.add_argument(
        "--file", type=Path, action="append", help="a saved arXiv RSS/Atom/OAI response"
    )
    backfill = add("backfill", cmd_backfill, "fill the last N days from arXiv's OAI-PMH")
    backfill.add_argument("--days", type=_days, default=56, help="how far back (default 56)")
    add("status", cmd_status, "when arXiv was last ingested, and when the next mailing is due")
    outbox = add("outbox", cmd_outbox, "the outbox: retry-dead requeues the dead letters")
    outbox.add_argument("action", choices=["retry-dead"])
    outbox.add_argument("--id", type=int, help="only the dead letter with this number")
    tag = add("tag", cmd_tag, "print the topics of each paper in a file (no database needed)")
    tag.add_argument("file", type=Path, help="arXiv RSS/Atom/OAI response, or JSON lines")
    topics = add("topics", cmd_topics, "list the topic catalog, or check it (--check)")
    topics.add_argument(
        "--check",
        action="store_true",
        help="check every rule, parent, slug, name and alias; print each problem; exit 1 if any",
    )
    topics.add_argument("--catalog", type=Path, help=CATALOG_HELP)
    momentum = add("momentum", cmd_momentum, "a topic's momentum: the sentence and a sparkline")
    momentum.add_argument("topic", nargs="+", help="a catalog topic, e.g. RL for LLM Agents")
    retag = add("retag", cmd_retag, "re-tag every stored paper (after changing the catalog)")
    retag.add_argument("--catalog", type=Path, help=CATALOG_HELP)
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
    configure_logging(settings.log_level, settings.secret_values())
    try:
        return asyncio.run(args.handler(args, settings))
    except (StartupError, DatabaseConfigError) as exc:
        print(f"paperwatch: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
