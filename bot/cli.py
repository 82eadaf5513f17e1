"""The `paperwatch` command: parse the arguments, build the Settings, call in.

Settings are built here, once, and handed to the subcommand's action (`bot.cli_actions`,
one `cmd_*` per subcommand). Nothing below this module reads the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path

from pydantic import ValidationError

from bot.app import StartupError
from bot.cli_actions import (
    cmd_backfill,
    cmd_console,
    cmd_db,
    cmd_ingest,
    cmd_momentum,
    cmd_outbox,
    cmd_retag,
    cmd_run,
    cmd_status,
    cmd_tag,
    cmd_topics,
)
from bot.cli_ask import cmd_ask
from bot.cli_like import CHATS, cmd_follow_like
from bot.config import Settings
from bot.log_secrets import configure_logging
from bot.scheduler import ROLES
from storage.database import DatabaseConfigError

CATALOG_HELP = "a catalog file to use instead of PAPERWATCH_CATALOG or the bundled one"

Action = Callable[[argparse.Namespace, Settings], Awaitable[int]]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paperwatch",
        description="Follow arXiv topics from a chat: alerts, digests and momentum.",
    )
    parser.add_argument("--version", action="version", version=f"paperwatch {_version()}")
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
    topics.add_argument("words", nargs="*", help="only the topics these words find, e.g. agents")
    momentum = add("momentum", cmd_momentum, "a topic's momentum: the sentence and a sparkline")
    momentum.add_argument("topic", nargs="+", help="a catalog topic, e.g. RL for LLM Agents")
    ask = add("ask", cmd_ask, "ask the stored papers a question; the answer quotes abstracts")
    ask.add_argument("question", help='e.g. "which rewards do web agents use?"')
    ask.add_argument("--topic", help="only this topic's papers (or a followed query's)")
    like = add("follow-like", cmd_follow_like, "follow papers like a BibTeX file's, or ids given")
    like.add_argument("--bib", metavar="FILE", help="a BibTeX file; its arXiv ids make the set")
    like.add_argument("--chat", choices=CHATS, default="console", help="the chat that follows")
    like.add_argument("ids", nargs="*", help="arXiv ids, instead of --bib")
    retag = add("retag", cmd_retag, "re-tag every stored paper (after changing the catalog)")
    retag.add_argument("--catalog", type=Path, help=CATALOG_HELP)
    db = add("db", cmd_db, "the database: upgrade its schema, show its revision, back it up")
    _db_actions(db)
    return parser


def _db_actions(db: argparse.ArgumentParser) -> None:
    actions = db.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("upgrade", help="migrate the schema to this version's head")
    actions.add_parser("current", help="show the schema's revision")
    backup = actions.add_parser(
        "backup",
        help="SQLite: copy the database to PATH, while the bot runs; "
        "PostgreSQL: print the pg_dump command that does",
    )
    backup.add_argument("path", type=Path, metavar="PATH", help="the file to write")
    backup.add_argument("--force", action="store_true", help="replace PATH if it exists")
    down = actions.add_parser(
        "downgrade", help="migrate the schema down (before installing an older version)"
    )
    down.add_argument("revision", help="the older version's head revision, e.g. 0009")


def _version() -> str:
    try:
        return metadata.version("paperwatch")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def _days(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of days; give a whole number, e.g. --days 7"
        ) from None
    if not 1 <= value <= 3650:
        raise argparse.ArgumentTypeError("days must be between 1 and 3650")
    return value


#: Commands that keep running, whose log is their running commentary; the others answer
#: with their own output, so their log shows only warnings unless a level is set.
LONG_RUNNING = ("run", "console")


def _log_level(command: str, settings: Settings) -> str:
    if command in LONG_RUNNING or "log_level" in settings.model_fields_set:
        return settings.log_level
    return "WARNING"


def _plain(message: str) -> str:
    """A validator's message without pydantic's "Value error, " in front, ending in a stop."""
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return message if message.endswith((".", "?", "!")) else message + "."


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            print(f"paperwatch: bad setting {where}: {_plain(error['msg'])}", file=sys.stderr)
        return 2
    configure_logging(
        _log_level(args.command, settings), settings.secret_values(), settings.log_format
    )
    try:
        return asyncio.run(args.handler(args, settings))
    except (StartupError, DatabaseConfigError) as exc:
        print(f"paperwatch: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
