"""Field helpers for the arXiv parsers: text cleaning, ids, author lists and dates.

Pure functions, stdlib only. Text is never "repaired": LaTeX, non-ASCII and any
mojibake already in the source come out exactly as decoded; the only changes are
removing invisible characters and collapsing whitespace.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from zoneinfo import ZoneInfo

from bot.domain import Author, split_arxiv_id

# Invisible characters removed from every text field: C0 controls (tab, newline and
# carriage return are whitespace and get collapsed instead), DEL, zero-width
# characters, bidi controls and the BOM. C1 controls (U+0080..U+009F) and the soft
# hyphen are kept on purpose: in arXiv data they occur only inside UTF-8/Latin-1
# mojibake ("WeiÃ\x9fl"), and deleting them would make that text unrepairable.
_INVISIBLE = (
    *(c for c in range(0x20) if chr(c) not in "\t\n\r"),
    0x7F,
    0x180E,
    *range(0x200B, 0x2010),  # ZWSP, ZWNJ, ZWJ, LRM, RLM
    *range(0x202A, 0x202F),  # bidi embeddings and overrides
    *range(0x2060, 0x2065),  # word joiner, invisible operators
    *range(0x2066, 0x206A),  # bidi isolates
    0xFEFF,
)
_DELETE_INVISIBLE = dict.fromkeys(_INVISIBLE)

# The same C0 controls as bytes: expat rejects them, so a document holding one is
# retried once without them (they never occur inside UTF-8 multi-byte sequences).
CONTROL_BYTES = bytes(c for c in range(0x20) if c not in b"\t\n\r")

# A daily listing's description: "arXiv:2411.17700v1 Announce Type: new Abstract: ..."
_LISTING_PREFIX = re.compile(
    r"arXiv:(?P<id>\S+) Announce Type: ?(?P<type>[\w-]+)(?: Abstract:)? ?", re.IGNORECASE
)
# Separators in a one-string author list: parentheses (affiliations), commas
# (optionally followed by "and") and a free-standing "and".
_AUTHOR_TOKEN = re.compile(r"[()]|,\s*(?:and\b\s*)?|\s+and\b\s*")
_AUTHOR_SEPARATOR = re.compile(r",\s*(?:and\b\s*)?|\s+and\b\s*")
_HAS_WORD = re.compile(r"\w")
_NAME_SUFFIXES = frozenset({"Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"})

_EASTERN = ZoneInfo("America/New_York")

# No arXiv paper comes near this many versions; a larger number is hostile or corrupt
# (and would not fit the database's integer column).
MAX_VERSION = 9_999

logger = logging.getLogger(__name__)


def clean_text(text: str | None) -> str:
    """Remove invisible characters and collapse all whitespace runs to one space."""
    if not text:
        return ""
    return " ".join(text.translate(_DELETE_INVISIBLE).split())


def clean_optional(text: str | None) -> str | None:
    """`clean_text`, but None when nothing is left."""
    cleaned = clean_text(text)
    return cleaned or None


def split_listing_description(text: str | None) -> tuple[str, str | None, str | None]:
    """Split a daily-listing description into (abstract, raw id, announce type).

    Descriptions without the "arXiv:... Announce Type: ..." prefix come back whole.
    """
    cleaned = clean_text(text)
    match = _LISTING_PREFIX.match(cleaned)
    if match is None:
        return cleaned, None, None
    return cleaned[match.end() :], match.group("id"), match.group("type").lower()


def first_token(text: str | None) -> str | None:
    """The first whitespace-separated token ("10.1/a 10.1/b" -> "10.1/a"), or None."""
    if not text:
        return None
    parts = clean_text(text).split(" ", 1)
    return parts[0] or None


def split_authors(text: str | None) -> tuple[Author, ...]:
    """Parse a one-string author list ("A, B (Univ. X), and C") in order.

    Commas and "and" separate authors only outside parentheses; a parenthesised
    group after a name is that author's affiliation. A bare suffix ("A Smith, Jr.")
    is joined to the name before it.
    """
    cleaned = clean_text(text)
    authors: list[Author] = []
    if "(" not in cleaned:
        for name in _AUTHOR_SEPARATOR.split(cleaned):
            _add_author(authors, name, [])
        return tuple(authors)
    depth = 0
    start = group_start = 0
    name_parts: list[str] = []
    groups: list[str] = []
    for match in _AUTHOR_TOKEN.finditer(cleaned):
        token = match.group()
        if token == "(":
            if depth == 0:
                name_parts.append(cleaned[start : match.start()])
                group_start = match.end()
            depth += 1
        elif token == ")":
            if depth == 1:
                groups.append(cleaned[group_start : match.start()])
                start = match.end()
            depth = max(depth - 1, 0)
        elif depth == 0:
            name_parts.append(cleaned[start : match.start()])
            _add_author(authors, "".join(name_parts), groups)
            name_parts, groups = [], []
            start = match.end()
    if depth:
        groups.append(cleaned[group_start:])
    else:
        name_parts.append(cleaned[start:])
    _add_author(authors, "".join(name_parts), groups)
    return tuple(authors)


def _add_author(authors: list[Author], raw_name: str, groups: list[str]) -> None:
    """Append one parsed author; `raw_name` and `groups` come from cleaned text."""
    name = raw_name.strip()
    if "  " in name:
        name = " ".join(name.split())
    affiliations = tuple(g for g in (g.strip() for g in groups) if g) if groups else ()
    if name in _NAME_SUFFIXES and authors and not affiliations:
        last = authors[-1]
        authors[-1] = Author(f"{last.name} {name}", last.affiliations)
    elif _HAS_WORD.search(name):
        authors.append(Author(name, affiliations))


def add_author(authors: list[Author], name: str, affiliations: tuple[str, ...] = ()) -> None:
    """Append an author unless the name holds no letter or digit (":" and the like)."""
    name = clean_text(name)
    if _HAS_WORD.search(name):
        authors.append(Author(name, affiliations))


def surname_first_to_name(text: str | None) -> str:
    """Turn Dublin Core's "Polozkov, R. G." into "R. G. Polozkov"."""
    cleaned = clean_text(text)
    surname, sep, forenames = cleaned.partition(", ")
    if not sep or "," in forenames:
        return cleaned
    return f"{forenames} {surname}"


def resolve_id(*candidates: str | None) -> tuple[str, int] | None:
    """The first parseable arXiv id among `candidates`, with the first version found
    for that id (1 if none carries one); None, logged, when nothing parses. An
    implausible version (see `checked_version`) raises ValueError: the entry is bad."""
    found: str | None = None
    for raw in candidates:
        if not raw:
            continue
        try:
            arxiv_id, version = split_arxiv_id(raw)
        except ValueError:
            continue
        if found is None:
            found = arxiv_id
        if arxiv_id == found and version is not None:
            return found, checked_version(version)
    if found is None:
        logger.warning("skipping an entry without a parseable arXiv id: %r", candidates)
        return None
    return found, 1


def checked_version(version: int) -> int:
    """`version` itself if it is a plausible arXiv version (1..MAX_VERSION); else ValueError."""
    if not 1 <= version <= MAX_VERSION:
        raise ValueError(f"implausible version number v{version}"[:80])
    return version


def unique(values: Iterable[str | None]) -> tuple[str, ...]:
    """Cleaned, non-empty values without duplicates, in first-seen order."""
    return tuple(dict.fromkeys(v for v in map(clean_text, values) if v))


def to_int(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text else None
    except ValueError:
        return None


def parse_iso_datetime(text: str | None) -> datetime | None:
    """Parse an ISO 8601 date or date-time into an aware UTC datetime (None if invalid).

    Date-only values ("2014-01-09") become midnight UTC; naive times are taken as UTC.
    """
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return _as_utc(value)


def parse_rfc822_datetime(text: str | None) -> datetime | None:
    """Parse an RFC 822 date ("Fri, 8 Feb 2013 21:00:01 GMT") into aware UTC, or None."""
    if not text:
        return None
    try:
        value = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return _as_utc(value)


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def eastern_date(moment: datetime) -> date:
    """The calendar date of `moment` in US Eastern time, where arXiv announces (the zone
    comes from the tzdata package where the system has no zone database)."""
    return moment.astimezone(_EASTERN).date()
