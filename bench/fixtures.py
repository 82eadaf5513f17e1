"""The repository's data files that benches and scripts read, and how to read them.

Papers in JSON lines are read as the product reads a file given to `paperwatch ingest
--file` (`bot.services.ingest.read_json_lines`); a file whose lines hold more than a paper (a
label, a source) is read as records, each made a paper by `bot.services.ingest.paper_from_json`.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bot.arxiv.parse import parse_feed
from bot.domain import Paper
from bot.services.ingest import read_json_lines

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
#: arXiv's real daily RSS listing of 2024-11-28: 1,504 items of every archive.
DAILY_FEED = FIXTURES / "arxiv" / "rss" / "jmmeus_aioarxiv_2024-11-28" / "rss_mock_feed.xml"
#: The flagship topic's hand-labelled development set (tests/fixtures/relevance/README.md).
DEVSET = FIXTURES / "relevance" / "devset.jsonl"


def daily_listing() -> list[Paper]:
    """The papers of the real daily listing, as the poller would parse them."""
    return list(parse_feed(DAILY_FEED.read_bytes()).papers)


def read_paper_file(path: Path) -> list[Paper]:
    """The papers of a JSON-lines file, gzip-compressed when its name ends in .gz."""
    with _open(path) as lines:
        return read_json_lines(lines)


def json_records(path: Path) -> Iterator[dict[str, Any]]:
    """Each record of a JSON-lines file (.gz: compressed), blank lines skipped."""
    with _open(path) as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def _open(path: Path) -> Any:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")
