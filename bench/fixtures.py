"""The repository's data files that benches and scripts read, and how to read them."""

from __future__ import annotations

from pathlib import Path

from bot.arxiv.parse import parse_feed
from bot.domain import Paper

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
#: arXiv's real daily RSS listing of 2024-11-28: 1,504 items of every archive.
DAILY_FEED = FIXTURES / "arxiv" / "rss" / "jmmeus_aioarxiv_2024-11-28" / "rss_mock_feed.xml"
#: The flagship topic's hand-labelled development set (tests/fixtures/relevance/README.md).
DEVSET = FIXTURES / "relevance" / "devset.jsonl"


def daily_listing() -> list[Paper]:
    """The papers of the real daily listing, as the poller would parse them."""
    return list(parse_feed(DAILY_FEED.read_bytes()).papers)
