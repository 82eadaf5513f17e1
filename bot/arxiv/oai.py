"""OAI-PMH responses (ListRecords / GetRecord, metadataPrefix arXivRaw, arXiv or oai_dc)
into a `Feed`. Pure code; `bot.arxiv.parse.parse_feed` calls `parse_oai` on an OAI-PMH root.

Deleted records, unknown metadata formats, records without a parseable id and records
with a hostile field (a version number no paper has) are skipped and counted.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET

from bot.arxiv import fields as fx
from bot.arxiv.feed import Feed, MalformedFeedError, OaiError, collect
from bot.domain import Author, Paper

logger = logging.getLogger(__name__)

OAI = "{http://www.openarchives.org/OAI/2.0/}"
_DC = "{http://purl.org/dc/elements/1.1/}"


def parse_oai(root: ET.Element) -> Feed:
    """An OAI-PMH document: its records, or OaiError for an <error> (noRecordsMatch is empty)."""
    error = root.find(f"{OAI}error")
    if error is not None:
        code = error.get("code") or "unknown"
        if code == "noRecordsMatch":
            return Feed("oai")
        raise OaiError(code[:80], fx.clean_text(error.text)[:300] or "no message")
    container = root.find(f"{OAI}ListRecords")
    if container is None:
        container = root.find(f"{OAI}GetRecord")
    if container is None:
        raise MalformedFeedError("OAI-PMH response holds neither ListRecords nor GetRecord")
    papers, skipped = collect(container.iterfind(f"{OAI}record"), _oai_paper, _header_id)
    token = container.find(f"{OAI}resumptionToken")
    if token is None:
        return Feed("oai", papers, skipped=skipped)
    return Feed(
        "oai",
        papers,
        resumption_token=fx.clean_optional(token.text),
        complete_list_size=fx.to_int(token.get("completeListSize")),
        start_index=fx.to_int(token.get("cursor")),
        skipped=skipped,
    )


def _header_id(record: ET.Element) -> str | None:
    return record.findtext(f"{OAI}header/{OAI}identifier")


def _oai_paper(record: ET.Element) -> Paper | None:
    """One record; deleted records and unknown metadata formats count as skipped."""
    header_id = record.findtext(f"{OAI}header/{OAI}identifier")
    if record.find(f"{OAI}header[@status='deleted']") is not None:
        return None
    metadata = record.find(f"{OAI}metadata")
    if metadata is None or len(metadata) == 0:
        return None
    payload = metadata[0]
    namespace, brace, local = payload.tag.rpartition("}")
    parser = _OAI_FORMATS.get(local)
    if parser is None:
        logger.warning("skipping OAI record in unsupported format %r", local)
        return None
    return parser(payload, namespace + brace, header_id)


def _arxiv_raw_paper(meta: ET.Element, ns: str, header_id: str | None) -> Paper | None:
    """metadataPrefix=arXivRaw: authors as one string, every version with its date."""
    ident = fx.resolve_id(meta.findtext(f"{ns}id"), header_id)
    if ident is None:
        return None
    versions = sorted(
        (_version_number(v.get("version")), v.findtext(f"{ns}date"))
        for v in meta.iterfind(f"{ns}version")
    )
    return Paper(
        arxiv_id=ident[0],
        version=max(versions[-1][0], 1) if versions else ident[1],
        title=fx.clean_text(meta.findtext(f"{ns}title")),
        abstract=fx.clean_text(meta.findtext(f"{ns}abstract")),
        authors=fx.split_authors(meta.findtext(f"{ns}authors")),
        categories=fx.unique((meta.findtext(f"{ns}categories") or "").split()),
        submitted=fx.parse_rfc822_datetime(versions[0][1]) if versions else None,
        updated=fx.parse_rfc822_datetime(versions[-1][1]) if versions else None,
        doi=fx.first_token(meta.findtext(f"{ns}doi")),
        journal_ref=fx.clean_optional(meta.findtext(f"{ns}journal-ref")),
        comment=fx.clean_optional(meta.findtext(f"{ns}comments")),
    )


def _version_number(value: str | None) -> int:
    """ "v3" -> 3; a missing or unreadable version sorts first as 0; an absurd one is an
    error that skips the record (`fx.checked_version`)."""
    number = fx.to_int((value or "").lstrip("vV"))
    return fx.checked_version(number) if number else 0


def _arxiv_paper(meta: ET.Element, ns: str, header_id: str | None) -> Paper | None:
    """metadataPrefix=arXiv: structured authors, created/updated dates, no version."""
    ident = fx.resolve_id(meta.findtext(f"{ns}id"), header_id)
    if ident is None:
        return None
    authors: list[Author] = []
    for author in meta.iterfind(f"{ns}authors/{ns}author"):
        parts = (
            author.findtext(f"{ns}forenames"),
            *(k.text for k in author.iterfind(f"{ns}keyname")),
            author.findtext(f"{ns}suffix"),
        )
        name = " ".join(p for p in parts if p)
        fx.add_author(authors, name, fx.unique(a.text for a in author.iterfind(f"{ns}affiliation")))
    created = fx.parse_iso_datetime(meta.findtext(f"{ns}created"))
    return Paper(
        arxiv_id=ident[0],
        version=ident[1],
        title=fx.clean_text(meta.findtext(f"{ns}title")),
        abstract=fx.clean_text(meta.findtext(f"{ns}abstract")),
        authors=tuple(authors),
        categories=fx.unique((meta.findtext(f"{ns}categories") or "").split()),
        submitted=created,
        updated=fx.parse_iso_datetime(meta.findtext(f"{ns}updated")) or created,
        doi=fx.first_token(meta.findtext(f"{ns}doi")),
        journal_ref=fx.clean_optional(meta.findtext(f"{ns}journal-ref")),
        comment=fx.clean_optional(meta.findtext(f"{ns}comments")),
    )


def _oai_dc_paper(meta: ET.Element, _ns: str, header_id: str | None) -> Paper | None:
    """metadataPrefix=oai_dc: no category codes (dc:subject holds names) and no version."""
    identifiers = fx.unique(i.text for i in meta.iterfind(f"{_DC}identifier"))
    ident = fx.resolve_id(header_id, *identifiers)
    if ident is None:
        return None
    descriptions = fx.unique(d.text for d in meta.iterfind(f"{_DC}description"))
    comments = [d for d in descriptions if d.startswith("Comment:")]
    dates = [fx.parse_iso_datetime(d.text) for d in meta.iterfind(f"{_DC}date")]
    others = [i for i in identifiers if not i.lower().startswith(("http://", "https://"))]
    dois = [i[4:] for i in others if i.lower().startswith("doi:")]
    journal_refs = [i for i in others if not i.lower().startswith("doi:")]
    return Paper(
        arxiv_id=ident[0],
        version=ident[1],
        title=fx.clean_text(meta.findtext(f"{_DC}title")),
        abstract=next((d for d in descriptions if not d.startswith("Comment:")), ""),
        authors=tuple(
            Author(name)
            for name in map(
                fx.surname_first_to_name, (c.text for c in meta.iterfind(f"{_DC}creator"))
            )
            if name
        ),
        submitted=dates[0] if dates else None,
        updated=dates[-1] if dates else None,
        doi=fx.first_token(dois[0]) if dois else None,
        journal_ref=journal_refs[0] if journal_refs else None,
        comment=comments[0].removeprefix("Comment:").strip() or None if comments else None,
    )


_OAI_FORMATS = {"arXivRaw": _arxiv_raw_paper, "arXiv": _arxiv_paper, "dc": _oai_dc_paper}
