"""What the arXiv parsers return and raise: `Feed`, the `FeedError` family, and the rule
that one bad entry never rejects a page (`collect`). Pure code, stdlib only."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from typing import Literal

from bot.domain import Paper

logger = logging.getLogger(__name__)

FeedKind = Literal["rss", "atom_listing", "api", "oai"]

# Errors a parser may hit on hostile field values (absurd numbers or dates, odd types);
# they reject the one entry that holds them, never the document.
ENTRY_FAULTS = (ValueError, TypeError, OverflowError, LookupError, IndexError, AttributeError)


class FeedError(Exception):
    """Base class: the response could not be turned into a `Feed`."""


class NotXmlError(FeedError):
    """The response is not XML at all (an HTML error page, plain text, nothing)."""


class MalformedFeedError(FeedError):
    """Invalid or truncated XML, or XML that is no known arXiv format."""


class InvalidXmlError(MalformedFeedError):
    """The bytes are not well-formed XML (most often a body cut short in transit)."""


class ArxivApiError(FeedError):
    """arXiv answered with an error document (API error entry, RSS error channel)."""


class OaiError(FeedError):
    """An OAI-PMH <error> other than noRecordsMatch."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"OAI-PMH error {code}: {message}")


@dataclass(frozen=True, slots=True)
class Feed:
    """One parsed response. Fields a format does not carry stay None / empty."""

    kind: FeedKind
    papers: tuple[Paper, ...] = ()
    announced: date | None = None  # daily listings: announcement date (US Eastern)
    total_results: int | None = None  # API opensearch:totalResults
    start_index: int | None = None  # API opensearch:startIndex, OAI token cursor
    resumption_token: str | None = None  # OAI; None on the last page
    complete_list_size: int | None = None  # OAI
    skip_days: tuple[str, ...] = ()  # RSS <skipDays>, in document order
    skipped: int = 0  # entries dropped: no parseable id, deleted, or a hostile field


def collect(
    entries: Iterable[ET.Element],
    parse_entry: Callable[[ET.Element], Paper | None],
    describe: Callable[[ET.Element], str | None],
) -> tuple[tuple[Paper, ...], int]:
    """Parse each entry; keep the papers, count the entries that gave None or failed.

    A failing entry is logged with its id (`describe`) and skipped, so one bad record
    costs that record only.
    """
    kept: list[Paper] = []
    skipped = 0
    for entry in entries:
        try:
            paper = parse_entry(entry)
        except ENTRY_FAULTS as exc:
            arxiv_id = describe(entry)
            logger.warning(
                "skipping a bad arXiv entry id=%s: %s", arxiv_id, exc, extra={"arxiv_id": arxiv_id}
            )
            paper = None
        if paper is None:
            skipped += 1
        else:
            kept.append(paper)
    return tuple(kept), skipped
