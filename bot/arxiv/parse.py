"""Parse arXiv responses into `Paper` objects: pure code, no HTTP.

`parse_feed(data)` detects the format from the document itself:

* ``rss``: the daily RSS 2.0 listing (rss.arxiv.org/rss/...);
* ``atom_listing``: the daily Atom listing (rss.arxiv.org/atom/...);
* ``api``: export API Atom responses (export.arxiv.org/api/query), old and 2026 layouts;
* ``oai``: OAI-PMH ListRecords/GetRecord with metadataPrefix arXivRaw, arXiv or oai_dc.

Every failure is a `FeedError` subclass with a one-line message. Entries whose id
cannot be parsed (and deleted OAI records) are skipped and counted in `Feed.skipped`.

Category order: the API and OAI formats name the primary category (API:
`arxiv:primary_category`, OAI: first of `categories`). The daily listings do not
mark it, but they list it first and the rest alphabetically (true for all 373
three-or-more-category items in the 1,504-item fixture, while 567 of 849
multi-category lists are not sorted as a whole), so listing order is kept as is.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from datetime import date

import defusedxml
import defusedxml.ElementTree as DET

from bot.arxiv import fields as fx
from bot.arxiv.feed import (
    ENTRY_FAULTS,
    ArxivApiError,
    Feed,
    FeedError,
    FeedKind,
    InvalidXmlError,
    MalformedFeedError,
    NotXmlError,
    OaiError,
    collect,
)
from bot.arxiv.oai import OAI, parse_oai
from bot.domain import AnnounceType, Author, Paper

__all__ = [
    "ArxivApiError",
    "Feed",
    "FeedError",
    "FeedKind",
    "InvalidXmlError",
    "MalformedFeedError",
    "NotXmlError",
    "OaiError",
    "parse_feed",
]

logger = logging.getLogger(__name__)

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
_DC = "{http://purl.org/dc/elements/1.1/}"

_HTML_START = re.compile(
    rb"\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_HTML_ANYWHERE = re.compile(rb"<(?:html|body)\b", re.I)
_HTML_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# Without a BOM, UTF-16 and UTF-32 still show in the first bytes: "<" next to NUL bytes.
_WIDE_START = (b"\x00\x00\x00<", b"<\x00\x00\x00", b"\x00<", b"<\x00")


def parse_feed(data: bytes) -> Feed:
    """Detect the format of an arXiv response and parse it (see the module docstring).

    Raises only `FeedError`: a hostile value the format parsers did not expect (outside
    any single entry, which would be skipped) makes the document malformed.
    """
    root = _parse_xml(data)
    try:
        return _parse_root(root)
    except ENTRY_FAULTS as exc:
        raise MalformedFeedError(f"unreadable {_local(root.tag)} document: {exc}"[:300]) from exc


def _parse_root(root: ET.Element) -> Feed:
    tag = root.tag
    if tag == "rss":
        return _parse_rss(root)
    if tag == f"{_ATOM}feed":
        return _parse_atom(root)
    if tag == f"{OAI}OAI-PMH":
        return parse_oai(root)
    if tag.endswith("}html") or tag.lower() == "html":
        raise NotXmlError("expected an arXiv feed but got an HTML page")
    raise MalformedFeedError(f"not a known arXiv format: root element <{tag[:100]}>")


def _local(tag: str) -> str:
    return tag.rpartition("}")[2][:40]


# --- XML ----------------------------------------------------------------------------


def _parse_xml(data: bytes) -> ET.Element:
    """Parse once with defusedxml, classifying every failure as a FeedError.

    Any document type declaration is refused after decoding, whatever the encoding
    (so no entity is ever expanded and no external DTD is fetched); arXiv never sends one.
    """
    head = data[:4096].lstrip(b"\xef\xbb\xbf")
    if not head.strip():
        raise NotXmlError("empty response body")
    if _HTML_START.match(head):
        raise NotXmlError(f"expected an arXiv feed but got an HTML page{_html_title(data)}")
    wide = data.startswith(_UTF16_BOMS) or data.startswith(_WIDE_START)
    if not head.lstrip().startswith(b"<") and not wide:
        raise NotXmlError(f"expected XML but the response starts with {head.strip()[:40]!r}")
    try:
        return _defused_fromstring(data)
    except ET.ParseError as err:
        retry = None if wide else _without_control_bytes(data)
        if retry is not None:
            try:
                return _defused_fromstring(retry)
            except ET.ParseError:
                pass
        if _HTML_ANYWHERE.search(data, 0, 4096):
            raise NotXmlError(f"expected an arXiv feed but got HTML{_html_title(data)}") from err
        raise InvalidXmlError(f"invalid XML: {err}") from err


def _defused_fromstring(data: bytes) -> ET.Element:
    """defusedxml's parser with DOCTYPE forbidden; non-syntax failures become FeedErrors."""
    try:
        return DET.fromstring(data, forbid_dtd=True)
    except defusedxml.DefusedXmlException as exc:
        raise MalformedFeedError(
            "XML document type declarations and entity declarations are not accepted"
        ) from exc
    except (LookupError, ValueError) as exc:  # an unknown or unusable declared encoding
        raise MalformedFeedError(f"unsupported XML encoding: {exc}"[:200]) from exc


def _html_title(data: bytes) -> str:
    match = _HTML_TITLE.search(data[:16384])
    title = fx.clean_text(match.group(1).decode("utf-8", "replace")) if match else ""
    return f": {title[:120]!r}" if title else ""


def _without_control_bytes(data: bytes) -> bytes | None:
    """The document without C0 control bytes (which XML forbids), or None if it had none."""
    cleaned = data.translate(None, fx.CONTROL_BYTES)
    return cleaned if len(cleaned) != len(data) else None


# --- Shared helpers -----------------------------------------------------------------


def _announce_type(value: str | None) -> AnnounceType:
    if not value:
        return AnnounceType.NEW
    try:
        return AnnounceType(value.strip().lower())
    except ValueError:
        logger.warning("unknown announce type %r, treated as a replacement", value)
        return AnnounceType.REPLACE


# --- Daily listings: RSS 2.0 and Atom -----------------------------------------------


def _parse_rss(root: ET.Element) -> Feed:
    channel = root.find("channel")
    if channel is None:
        raise MalformedFeedError("RSS document has no <channel>")
    if fx.clean_text(channel.findtext("title")).startswith("Feed error for query"):
        detail = fx.clean_text(channel.findtext("description")) or "no details"
        raise ArxivApiError(f"arXiv RSS feed error: {detail}")
    items = channel.findall("item")
    moment = fx.parse_rfc822_datetime(channel.findtext("pubDate"))
    if moment is None and items:
        moment = fx.parse_rfc822_datetime(items[0].findtext("pubDate"))
    announced = fx.eastern_date(moment) if moment else None
    papers, skipped = collect(
        items,
        lambda item: _listing_paper(
            item,
            ids=(item.findtext("guid"), item.findtext("link")),
            title=item.findtext("title"),
            description=item.findtext("description"),
            categories=(c.text for c in item.iterfind("category")),
            announced=announced,
        ),
        lambda item: item.findtext("guid") or item.findtext("link"),
    )
    skip_days = fx.unique(day.text for day in channel.iterfind("skipDays/day"))
    return Feed("rss", papers, announced=announced, skip_days=skip_days, skipped=skipped)


def _parse_atom_listing(root: ET.Element) -> Feed:
    """The Atom listing. Its announcement date is the entries' `published` (midnight
    US Eastern of the listing day); the feed's `updated` is only the build time and
    serves as a fallback for an empty listing."""
    entries = root.findall(f"{_ATOM}entry")
    stamp = entries[0].findtext(f"{_ATOM}published") if entries else None
    moment = fx.parse_iso_datetime(stamp or root.findtext(f"{_ATOM}updated"))
    announced = fx.eastern_date(moment) if moment else None
    papers, skipped = collect(
        entries,
        lambda entry: _listing_paper(
            entry,
            ids=(entry.findtext(f"{_ATOM}id"),),
            title=entry.findtext(f"{_ATOM}title"),
            description=entry.findtext(f"{_ATOM}summary"),
            categories=(c.get("term") for c in entry.iterfind(f"{_ATOM}category")),
            announced=announced,
        ),
        _atom_id,
    )
    return Feed("atom_listing", papers, announced=announced, skipped=skipped)


def _atom_id(entry: ET.Element) -> str | None:
    return entry.findtext(f"{_ATOM}id")


def _listing_paper(
    entry: ET.Element,
    *,
    ids: tuple[str | None, ...],
    title: str | None,
    description: str | None,
    categories: Iterable[str | None],
    announced: date | None,
) -> Paper | None:
    """One daily-listing entry; the RSS and Atom listings share the `arxiv:`/`dc:` fields."""
    abstract, described_id, described_type = fx.split_listing_description(description)
    ident = fx.resolve_id(ids[0], described_id, *ids[1:])
    if ident is None:
        return None
    return Paper(
        arxiv_id=ident[0],
        version=ident[1],
        title=fx.clean_text(title),
        abstract=abstract,
        authors=fx.split_authors(entry.findtext(f"{_DC}creator")),
        categories=fx.unique(categories),
        announced=announced,
        doi=fx.first_token(entry.findtext(f"{_ARXIV}DOI")),
        journal_ref=fx.clean_optional(entry.findtext(f"{_ARXIV}journal_reference")),
        announce_type=_announce_type(entry.findtext(f"{_ARXIV}announce_type") or described_type),
    )


# --- Export API (Atom) --------------------------------------------------------------


def _parse_atom(root: ET.Element) -> Feed:
    if root.find(f"{_OPENSEARCH}totalResults") is not None:
        return _parse_api(root)
    feed_id = root.findtext(f"{_ATOM}id") or ""
    if "rss.arxiv.org" in feed_id or root.find(f"{_ATOM}entry/{_ARXIV}announce_type") is not None:
        return _parse_atom_listing(root)
    if "arxiv.org" in feed_id:
        return _parse_api(root)
    raise MalformedFeedError(f"Atom feed is not from arXiv (feed id {feed_id[:80]!r})")


def _parse_api(root: ET.Element) -> Feed:
    entries = root.findall(f"{_ATOM}entry")
    for entry in entries:
        entry_id = entry.findtext(f"{_ATOM}id") or ""
        if "/api/errors" in entry_id:
            message = fx.clean_text(entry.findtext(f"{_ATOM}summary")) or entry_id
            raise ArxivApiError(f"arXiv API error: {message}")
    papers, skipped = collect(entries, _api_paper, _atom_id)
    return Feed(
        "api",
        papers,
        total_results=fx.to_int(root.findtext(f"{_OPENSEARCH}totalResults")),
        start_index=fx.to_int(root.findtext(f"{_OPENSEARCH}startIndex")),
        skipped=skipped,
    )


def _api_paper(entry: ET.Element) -> Paper | None:
    ident = fx.resolve_id(entry.findtext(f"{_ATOM}id"))
    if ident is None:
        return None
    categories = [c.get("term") for c in entry.iterfind(f"{_ATOM}category")]
    primary = entry.find(f"{_ARXIV}primary_category")
    if primary is not None:
        categories.insert(0, primary.get("term"))
    authors: list[Author] = []
    for author in entry.iterfind(f"{_ATOM}author"):
        affiliations = fx.unique(a.text for a in author.iterfind(f"{_ARXIV}affiliation"))
        fx.add_author(authors, author.findtext(f"{_ATOM}name") or "", affiliations)
    # The API is a lookup, not a listing: a paper past its first version is an old paper
    # that was replaced, and (like a listing's replacement) never alerts as new.
    replaced = ident[1] > 1
    return Paper(
        arxiv_id=ident[0],
        version=ident[1],
        announce_type=AnnounceType.REPLACE if replaced else AnnounceType.NEW,
        title=fx.clean_text(entry.findtext(f"{_ATOM}title")),
        abstract=fx.clean_text(entry.findtext(f"{_ATOM}summary")),
        authors=tuple(authors),
        categories=fx.unique(categories),
        submitted=fx.parse_iso_datetime(entry.findtext(f"{_ATOM}published")),
        updated=fx.parse_iso_datetime(entry.findtext(f"{_ATOM}updated")),
        doi=fx.first_token(entry.findtext(f"{_ARXIV}doi")),
        journal_ref=fx.clean_optional(entry.findtext(f"{_ARXIV}journal_ref")),
        comment=fx.clean_optional(entry.findtext(f"{_ARXIV}comment")),
    )
