"""A fake arXiv OAI-PMH repository for FakeArxiv: day-by-day ListRecords with paging and
injected faults.

Its records are real ones, cut out of the OAI-PMH fixtures in tests/fixtures/arxiv/oai_pmh/
(both arXivRaw and arXiv metadata), spread over the given days (their datestamps
rewritten). A harvest asks for one set and one day; the answer holds the records of
that day whose setSpec falls under the set (arXiv's sets are hierarchical: "physics"
covers "physics:hep-th"), `page_size` per page, with resumption tokens.

Faults are injected once each, at (day, page index) of the first harvest that reaches
that page: "truncated" (a 200 whose body is cut in half), "html" (a 200 HTML error page)
or "bad_token" (badResumptionToken; only on pages after the first, which need a token).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from tests.support.arxiv_server import Canned, Seen

OAI_FIXTURES = Path(__file__).parents[1] / "fixtures" / "arxiv" / "oai_pmh"
SOURCES = (
    "mikesaelim_arXivOAIHarvester/ListRecordsResponse.xml",
    "mikesaelim_arXivOAIHarvester/GetRecordResponse.xml",
    "inspirehep_hepcrawl/arxiv-physics-hep-ex.xml",
    "inspirehep_hepcrawl/arxiv-physics-hep-th.xml",
    "inspirehep_hepcrawl/arxiv-single.xml",
    "inspirehep_hepcrawl/sample_arxiv_record_multi_getrecord.xml",
)
Fault = str  # "truncated" | "html" | "bad_token"

_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
    "<responseDate>2026-09-25T01:00:00Z</responseDate>\n"
    '<request verb="ListRecords">http://export.arxiv.org/oai2</request>\n'
)
HTML_ERROR = (
    b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
    b"<body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"
)
BAD_TOKEN = OAI_FIXTURES / "mikesaelim_arXivOAIHarvester/ErrorResponseBadResumptionToken.xml"
NO_RECORDS = OAI_FIXTURES / "mikesaelim_arXivOAIHarvester/ErrorResponseNoRecordsMatch.xml"


@dataclass(frozen=True)
class Record:
    arxiv_id: str
    sets: tuple[str, ...]
    xml: str  # the <record> element, datestamp still as in the fixture


def real_records(sources: Iterable[str] = SOURCES) -> list[Record]:
    """Every <record> of the OAI-PMH fixtures, once per arXiv id, in file order."""
    found: dict[str, Record] = {}
    for source in sources:
        text = (OAI_FIXTURES / source).read_text(encoding="utf-8")
        for xml in re.findall(r"<record>.*?</record>", text, flags=re.S):
            ident = re.search(r"<identifier>oai:arXiv\.org:([^<]+)</identifier>", xml)
            assert ident, xml[:200]
            sets = tuple(re.findall(r"<setSpec>([^<]+)</setSpec>", xml))
            found.setdefault(ident.group(1), Record(ident.group(1), sets, xml))
    return list(found.values())


def record_categories(records: Iterable[Record]) -> tuple[str, ...]:
    """All category codes the records carry, so a poller configured with them wants all."""
    codes: dict[str, None] = {}
    for record in records:
        for match in re.findall(r"<categories>([^<]+)</categories>", record.xml):
            codes.update(dict.fromkeys(match.split()))
    return tuple(codes)


@dataclass
class OaiRepository:
    """Stand-in for FakeArxiv.responder; `served` logs (day, set, page, fault or "ok")."""

    records: Sequence[Record]
    days: Sequence[date]
    page_size: int = 2
    faults: dict[tuple[date, int], Fault] = field(default_factory=dict)
    served: list[tuple[date, str, int, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def day_of(self, index: int) -> date:
        return self.days[index % len(self.days)]

    def ids_on(self, day: date) -> set[str]:
        return {r.arxiv_id for i, r in enumerate(self.records) if self.day_of(i) == day}

    def __call__(self, seen: Seen) -> Canned:
        with self._lock:
            return self._respond(seen)

    def _respond(self, seen: Seen) -> Canned:
        query = {k: v[0] for k, v in seen.query.items()}
        if "resumptionToken" in query:
            day_text, oai_set, start = query["resumptionToken"].split("|")
            day, page = date.fromisoformat(day_text), int(start) // self.page_size
        else:
            assert query["from"] == query["until"], query
            day, oai_set, page = date.fromisoformat(query["from"]), query["set"], 0
        fault = self.faults.pop((day, page), None)
        if fault == "bad_token" and page == 0:
            self.faults[(day, page)] = fault  # only a token can be bad: wait for one
            fault = None
        self.served.append((day, oai_set, page, fault or "ok"))
        if fault == "html":
            return Canned(HTML_ERROR, content_type="text/html; charset=utf-8")
        if fault == "bad_token":
            return Canned(BAD_TOKEN.read_bytes())
        body = self._page(day, oai_set, page)
        if fault == "truncated":
            return Canned(body[: len(body) // 2])
        return Canned(body)

    def _page(self, day: date, oai_set: str, page: int) -> bytes:
        matching = [
            record.xml.replace(
                record.xml[record.xml.index("<datestamp>") : record.xml.index("</datestamp>")],
                f"<datestamp>{day.isoformat()}",
            )
            for i, record in enumerate(self.records)
            if self.day_of(i) == day and _in_set(record.sets, oai_set)
        ]
        if not matching:
            return NO_RECORDS.read_bytes()
        start = page * self.page_size
        chunk = matching[start : start + self.page_size]
        following = start + self.page_size
        token = ""
        if following < len(matching):
            token = f"{day.isoformat()}|{oai_set}|{following}"
        body = "\n".join(chunk)
        return (
            f"{_HEAD}<ListRecords>\n{body}\n"
            f'<resumptionToken cursor="{start}" completeListSize="{len(matching)}">'
            f"{token}</resumptionToken>\n</ListRecords>\n</OAI-PMH>\n"
        ).encode()


def _in_set(specs: Sequence[str], oai_set: str) -> bool:
    return any(spec == oai_set or spec.startswith(oai_set + ":") for spec in specs)
