"""Hostile and broken arXiv responses: the parser answers with a Feed or a FeedError, never
with any other exception, and never expands a document type declaration.

The fuzz cases mutate the real fixtures (tests/fixtures/arxiv/) with a fixed seed, so a
failure is reproducible from its id.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from bot.arxiv.parse import Feed, FeedError, MalformedFeedError, parse_feed

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"
SMALL_RSS = FIXTURES / "rss/msudars_laya-reader/arxiv_rss.xml"
LIST_RECORDS = FIXTURES / "oai_pmh/mikesaelim_arXivOAIHarvester/ListRecordsResponse.xml"
HEP_TH = FIXTURES / "oai_pmh/inspirehep_hepcrawl/arxiv-physics-hep-th.xml"
ATOM_LISTING = FIXTURES / "rss/sakshamchitkara-dotcom_paper-forge/arxiv_rss_atom_cs.LG.xml"
API = FIXTURES / "api/dcondrey_zotero-validate/arxiv_id_list_1706.03762.xml"
HUGE = b"99999999999999999999"

# --- row 9: unknown encodings and absurd numbers ------------------------------------------


@pytest.mark.parametrize("encoding", [b"bogus-enc", b"x", b"utf-7", b"cp037"])
def test_an_unknown_or_unusable_encoding_is_a_feed_error(encoding: bytes) -> None:
    data = SMALL_RSS.read_bytes().replace(b"encoding='UTF-8'", b"encoding='" + encoding + b"'")
    with pytest.raises(FeedError):
        parse_feed(data)


def test_an_unknown_encoding_says_so() -> None:
    data = SMALL_RSS.read_bytes().replace(b"encoding='UTF-8'", b"encoding='bogus-enc'")
    with pytest.raises(MalformedFeedError, match="bogus-enc"):
        parse_feed(data)


def test_a_huge_oai_version_skips_only_that_record(caplog: pytest.LogCaptureFixture) -> None:
    data = LIST_RECORDS.read_bytes()
    good = parse_feed(data)
    bad = data.replace(b'<version version="v1">', b'<version version="v' + HUGE + b'">', 1)
    feed = parse_feed(bad)
    assert len(feed.papers) == len(good.papers) - 1
    assert feed.skipped == good.skipped + 1
    assert good.papers[0].arxiv_id not in {p.arxiv_id for p in feed.papers}
    assert good.papers[0].arxiv_id in caplog.text  # logged with its id


def test_a_huge_version_in_a_listing_id_skips_only_that_entry() -> None:
    data = SMALL_RSS.read_bytes()
    good = parse_feed(data)
    first = good.papers[0]
    bad = data.replace(
        f"{first.arxiv_id}v{first.version}".encode(), f"{first.arxiv_id}v".encode() + HUGE
    )
    feed = parse_feed(bad)
    assert all(p.version < 10**6 for p in feed.papers)
    assert {p.arxiv_id for p in feed.papers} == {p.arxiv_id for p in good.papers} - {first.arxiv_id}


# --- row 11: document type declarations, however they are spelled ---------------------------

ENTITY_RSS = (
    '<?xml version="1.0" encoding="{enc}"?>'
    '<!DOCTYPE rss [<!ENTITY x "EXPANDED">]>'
    "<rss><channel><title>&x;</title></channel></rss>"
)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(ENTITY_RSS.format(enc="UTF-16").encode("utf-16"), id="utf-16"),
        pytest.param(ENTITY_RSS.format(enc="UTF-16BE").encode("utf-16-be"), id="utf-16be-no-bom"),
        pytest.param(
            ENTITY_RSS.format(enc="UTF-8").replace("ENTITY", "EN\x01TITY").encode(),
            id="control-byte",
        ),
        pytest.param(
            b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
            b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
            b"<rss><channel><title>&lol3;</title></channel></rss>",
            id="billion-laughs",
        ),
        pytest.param(
            b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
            b"<rss><channel><title>&xxe;</title></channel></rss>",
            id="external-entity",
        ),
        pytest.param(
            b'<?xml version="1.0"?><!DOCTYPE rss SYSTEM "http://127.0.0.1:9/evil.dtd">'
            b"<rss><channel><title>t</title></channel></rss>",
            id="external-dtd",
        ),
        pytest.param(
            b'<?xml version="1.0"?><!DOCTYPE rss><rss><channel><title>t</title></channel></rss>',
            id="bare-doctype",
        ),
    ],
)
def test_any_document_type_declaration_is_refused(data: bytes) -> None:
    with pytest.raises(MalformedFeedError, match="not accepted"):
        parse_feed(data)


# --- fuzz: mutated real fixtures ------------------------------------------------------------

SOURCES = (SMALL_RSS, LIST_RECORDS, HEP_TH, ATOM_LISTING, API)
ENCODINGS = (b"bogus-enc", b"utf-16", b"utf-32", b"latin-1", b"ascii", b"cp1252", b"", b"\xff")


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data))]


def _flip_bytes(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def _encoding(data: bytes, rng: random.Random) -> bytes:
    return re.sub(rb"encoding=(['\"])[^'\"]*\1", b'encoding="' + rng.choice(ENCODINGS) + b'"', data)


def _huge_number(data: bytes, rng: random.Random) -> bytes:
    runs = list(re.finditer(rb"\d+", data))
    match = rng.choice(runs)
    return data[: match.start()] + HUGE * rng.randint(1, 3) + data[match.end() :]


def _control_byte(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + bytes([rng.randrange(32)]) + data[at:]


def _reencode(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8")
    return text.encode(rng.choice(("utf-16", "utf-16-le", "utf-32")))


MUTATIONS = (_truncate, _flip_bytes, _encoding, _huge_number, _control_byte, _reencode)
CASES = [(m, s, seed) for m in MUTATIONS for s in SOURCES for seed in range(5)]


@pytest.mark.parametrize(
    ("mutate", "source", "seed"),
    CASES,
    ids=[f"{m.__name__[1:]}-{s.stem[:20]}-{seed}" for m, s, seed in CASES],
)
def test_fuzzed_fixtures_give_a_feed_or_a_feed_error(mutate, source: Path, seed: int) -> None:
    data = mutate(source.read_bytes(), random.Random(f"{source.name}:{seed}"))
    try:
        feed = parse_feed(data)
    except FeedError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert isinstance(feed, Feed)
        assert all(0 < p.version < 10**6 for p in feed.papers)
