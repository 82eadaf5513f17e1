"""Tests for bot.arxiv.parse against real arXiv responses (tests/fixtures/arxiv/SOURCES.md)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.arxiv import fields as fx
from bot.arxiv.parse import (
    ArxivApiError,
    Feed,
    FeedError,
    MalformedFeedError,
    NotXmlError,
    OaiError,
    parse_feed,
)
from bot.domain import AnnounceType, Author, Paper

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"

BIG_RSS = "rss/jmmeus_aioarxiv_2024-11-28/rss_mock_feed.xml"
EMPTY_RSS = "rss/jmmeus_aioarxiv_2024-11-28/empty_rss_mock_feed.xml"
ERROR_RSS = "rss/jmmeus_aioarxiv_2024-11-28/error_rss_mock_feed.xml"
SMALL_RSS = "rss/msudars_laya-reader/arxiv_rss.xml"
ATOM_LISTING = "rss/sakshamchitkara-dotcom_paper-forge/arxiv_rss_atom_cs.LG.xml"
API_2016 = "api/lukasschwab_arxiv.py/2016_xml/"
API_2026 = "api/lukasschwab_arxiv.py/2026_recorded_json_bodies/"
ID_LIST_V2 = API_2016 + "id_list_1111.2011v2.xml"
DEL_MAESTRO = API_2016 + "search_au_del_maestro.xml"
API_EMPTY = API_2026 + "id_0000.0000_s0_m100_8b51d9633a68.xml"
API_EMPTY_2 = API_2026 + "id_0808.05394_s0_m100_7b0c7d0a7cdd.xml"
API_ERROR = API_2026 + "id_abc_s0_m100_b79c8dcf6bc3.xml"
API_34_AUTHORS = API_2026 + "id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.xml"
API_AFFILIATIONS = API_2026 + "id_astro-ph_0601001_s0_m100_3150dca9dc76.xml"
API_QUANT_PH = API_2026 + "id_quant-ph_0201082v1_s0_m100_86989fe779ef.xml"
API_TESTING_S0 = API_2026 + "q_testing_s0_m10_bc5a6c384fe9.xml"
API_TESTING_S20 = API_2026 + "q_testing_s20_m10_348a237fecab.xml"
WATAKANDAI = "api/watakandai_technews/arxiv_cat_cs.RO_max3.xml"
DCONDREY = "api/dcondrey_zotero-validate/arxiv_id_list_1706.03762.xml"
JAMES_AKL = "api/james-akl_xiv/arxiv_response_cs.RO_neural_2025-10.xml"
ZOIA = "api/joe-antognini_zoia/arxiv_response_id_1601.00001.xml"
OAI_RAW = "oai_pmh/mikesaelim_arXivOAIHarvester/"
LIST_RECORDS = OAI_RAW + "ListRecordsResponse.xml"
GET_RECORD = OAI_RAW + "GetRecordResponse.xml"
OAI_ARXIV = "oai_pmh/inspirehep_hepcrawl/"
OAI_HEP_EX = OAI_ARXIV + "arxiv-physics-hep-ex.xml"
OAI_SINGLE = OAI_ARXIV + "arxiv-single.xml"
OAI_MULTI = OAI_ARXIV + "sample_arxiv_record_multi_getrecord.xml"

ERROR_FILES = (
    API_ERROR,
    ERROR_RSS,
    *(
        OAI_RAW + f"ErrorResponse{name}.xml"
        for name in ("BadArgument", "BadResumptionToken", "BadVerb", "IdDoesNotExist")
    ),
)
PARSEABLE = sorted(
    str(p.relative_to(FIXTURES))
    for p in FIXTURES.rglob("*.xml")
    if str(p.relative_to(FIXTURES)) not in ERROR_FILES
)


@cache
def raw(path: str) -> bytes:
    return (FIXTURES / path).read_bytes()


@cache
def feed_of(path: str) -> Feed:
    return parse_feed(raw(path))


def paper(path: str, arxiv_id: str) -> Paper:
    matches = [p for p in feed_of(path).papers if p.arxiv_id == arxiv_id]
    assert len(matches) == 1, f"{arxiv_id} appears {len(matches)} times in {path}"
    return matches[0]


def edited(path: str, *replacements: tuple[bytes, bytes], count: int = 0) -> bytes:
    """A fixture with regex replacements applied; each must match at least once."""
    data = raw(path)
    for pattern, replacement in replacements:
        data, n = re.subn(pattern, replacement, data, count=count, flags=re.S)
        assert n, f"{pattern!r} not found in {path}"
    return data


# --- Formats, counts and feed-level fields ------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind", "count"),
    [
        (BIG_RSS, "rss", 1504),
        (SMALL_RSS, "rss", 4),
        (EMPTY_RSS, "rss", 0),
        (ATOM_LISTING, "atom_listing", 3),
        (ID_LIST_V2, "api", 1),
        (DEL_MAESTRO, "api", 10),
        (API_2016 + "search_au_del_maestro_ANDNOT_checkerboard_OR_Pyrochlore.xml", "api", 10),
        (API_2016 + "search_au_del_maestro_AND_ti_checkerboard.xml", "api", 1),
        (API_2016 + "search_au_del_maestro_AND_ti_quantum_criticality.xml", "api", 2),
        (API_EMPTY, "api", 0),
        (API_EMPTY_2, "api", 0),
        (API_34_AUTHORS, "api", 1),
        (API_AFFILIATIONS, "api", 1),
        (API_TESTING_S0, "api", 10),
        (API_TESTING_S20, "api", 10),
        (WATAKANDAI, "api", 3),
        (DCONDREY, "api", 1),
        (JAMES_AKL, "api", 2),
        (ZOIA, "api", 1),
        (LIST_RECORDS, "oai", 6),
        (GET_RECORD, "oai", 1),
        (OAI_RAW + "ErrorResponseNoRecordsMatch.xml", "oai", 0),
        (OAI_HEP_EX, "oai", 3),
        (OAI_ARXIV + "arxiv-physics-hep-th.xml", "oai", 3),
        (OAI_SINGLE, "oai", 1),
        (OAI_MULTI, "oai", 12),
    ],
)
def test_format_and_entry_count(path: str, kind: str, count: int) -> None:
    feed = feed_of(path)
    assert (feed.kind, len(feed.papers), feed.skipped) == (kind, count, 0)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (BIG_RSS, {"new": 926, "replace": 569, "cross": 9}),
        (SMALL_RSS, {"new": 2, "cross": 1, "replace": 1}),
        (ATOM_LISTING, {"new": 1, "cross": 1, "replace": 1}),
        (DEL_MAESTRO, {"new": 6, "replace": 4}),  # an API entry past v1 was replaced
        (LIST_RECORDS, {"new": 6}),
    ],
)
def test_announce_types(path: str, expected: dict[str, int]) -> None:
    assert Counter(p.announce_type.value for p in feed_of(path).papers) == expected


def test_announce_type_read_from_description_when_element_missing() -> None:
    data = edited(SMALL_RSS, (rb"<arxiv:announce_type>.*?</arxiv:announce_type>", b""))
    types = [p.announce_type for p in parse_feed(data).papers]
    assert types == ["new", "new", "cross", "replace"]


@pytest.mark.parametrize(
    ("path", "total", "start"),
    [
        (DEL_MAESTRO, 31, 0),
        (WATAKANDAI, 58344, 0),
        (API_TESTING_S20, 214881, 20),
        (API_EMPTY, 0, 0),
        (BIG_RSS, None, None),
    ],
)
def test_api_paging_fields(path: str, total: int | None, start: int | None) -> None:
    feed = feed_of(path)
    assert (feed.total_results, feed.start_index) == (total, start)


def test_oai_resumption_token_and_list_size() -> None:
    feed = feed_of(LIST_RECORDS)
    assert feed.resumption_token == "726959|1001"
    assert feed.complete_list_size == 58011
    assert feed.start_index == 0


@pytest.mark.parametrize("path", [GET_RECORD, OAI_HEP_EX])
def test_oai_without_resumption_token(path: str) -> None:
    feed = feed_of(path)
    assert (feed.resumption_token, feed.complete_list_size) == (None, None)


def test_oai_empty_resumption_token_marks_last_page() -> None:
    data = edited(LIST_RECORDS, (rb">726959\|1001<", b"><"))
    feed = parse_feed(data)
    assert (feed.resumption_token, feed.complete_list_size) == (None, 58011)


@pytest.mark.parametrize(
    ("path", "skip_days"),
    [
        (BIG_RSS, ("Saturday", "Sunday")),
        (EMPTY_RSS, ("Saturday", "Sunday")),
        (SMALL_RSS, ("Sunday", "Saturday")),
        (ATOM_LISTING, ()),
    ],
)
def test_skip_days(path: str, skip_days: tuple[str, ...]) -> None:
    assert feed_of(path).skip_days == skip_days


# --- Announcement dates -------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "announced"),
    [
        (BIG_RSS, date(2024, 11, 28)),
        (EMPTY_RSS, date(2024, 11, 28)),
        (SMALL_RSS, date(2026, 9, 24)),
        (ATOM_LISTING, date(2026, 9, 25)),
        (ID_LIST_V2, None),
        (LIST_RECORDS, None),
    ],
)
def test_feed_announcement_date(path: str, announced: date | None) -> None:
    feed = feed_of(path)
    assert feed.announced == announced
    assert all(p.announced == announced for p in feed.papers)


@pytest.mark.parametrize(
    ("path", "original", "replacement", "announced"),
    [
        # A UTC time after midnight UTC but before midnight Eastern is the day before.
        (
            SMALL_RSS,
            rb"Thu, 24 Sep 2026 00:00:00 -0400",
            b"Thu, 24 Sep 2026 03:30:00 +0000",
            date(2026, 9, 23),
        ),
        (
            EMPTY_RSS,
            rb"Thu, 28 Nov 2024 00:00:00 -0500",
            b"Thu, 28 Nov 2024 04:59:59 GMT",
            date(2024, 11, 27),
        ),
        (
            EMPTY_RSS,
            rb"Thu, 28 Nov 2024 00:00:00 -0500",
            b"Thu, 28 Nov 2024 05:00:00 GMT",
            date(2024, 11, 28),
        ),
        (ATOM_LISTING, rb"2026-09-25T00:00:00-04:00", b"2026-09-25T03:59:59Z", date(2026, 9, 24)),
        (
            ATOM_LISTING,
            rb"2026-09-25T00:00:00-04:00",
            b"2026-09-25T04:00:00+00:00",
            date(2026, 9, 25),
        ),
    ],
)
def test_announcement_date_is_taken_in_us_eastern_time(
    path: str, original: bytes, replacement: bytes, announced: date
) -> None:
    feed = parse_feed(edited(path, (original, replacement)))
    assert feed.announced == announced
    assert {p.announced for p in feed.papers} <= {announced}


def test_empty_atom_listing_falls_back_to_feed_updated() -> None:
    data = edited(ATOM_LISTING, (rb"\s*<entry>.*</entry>", b""))
    feed = parse_feed(data)
    assert (feed.kind, feed.papers, feed.announced) == ("atom_listing", (), date(2026, 9, 25))


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 3, 8, 6, 59, tzinfo=UTC),  # just before DST starts
        datetime(2026, 3, 8, 7, 0, tzinfo=UTC),  # DST starts
        datetime(2026, 3, 9, 3, 59, tzinfo=UTC),
        datetime(2026, 3, 9, 4, 0, tzinfo=UTC),
        datetime(2026, 11, 1, 5, 59, tzinfo=UTC),  # just before DST ends
        datetime(2026, 11, 1, 6, 0, tzinfo=UTC),  # DST ends
        datetime(2026, 11, 2, 4, 30, tzinfo=UTC),
        datetime(2024, 11, 28, 4, 59, tzinfo=UTC),
        datetime(2024, 11, 28, 5, 0, tzinfo=UTC),
        datetime(2026, 9, 25, 3, 59, tzinfo=UTC),
        datetime(2026, 9, 25, 4, 0, tzinfo=UTC),
    ],
)
def test_eastern_date(moment: datetime) -> None:
    # The hand-written US rule for machines without a zone database is gone: the tzdata
    # package is a declared dependency, so zoneinfo always has America/New_York.
    expected = moment.astimezone(ZoneInfo("America/New_York")).date()
    assert fx.eastern_date(moment) == expected


# --- Ids, versions and categories ---------------------------------------------------


@pytest.mark.parametrize(
    ("path", "index", "arxiv_id", "version"),
    [
        (BIG_RSS, 0, "2411.17700", 1),
        (SMALL_RSS, 2, "2205.06398", 2),
        (SMALL_RSS, 3, "2009.13987", 3),
        (ATOM_LISTING, 1, "2402.10149", 3),
        (ID_LIST_V2, 0, "1111.2011", 2),
        (DEL_MAESTRO, 1, "cond-mat/0412498", 1),
        (DEL_MAESTRO, 7, "cond-mat/0607501", 2),
        (DCONDREY, 0, "1706.03762", 7),
        (API_AFFILIATIONS, 0, "astro-ph/0601001", 1),
        (API_QUANT_PH, 0, "quant-ph/0201082", 1),
        (GET_RECORD, 0, "1302.2146", 2),
        (LIST_RECORDS, 1, "0704.0716", 4),
        (OAI_SINGLE, 0, "1401.2122", 1),  # metadataPrefix=arXiv carries no version
    ],
)
def test_version_free_id_and_version(path: str, index: int, arxiv_id: str, version: int) -> None:
    found = feed_of(path).papers[index]
    assert (found.arxiv_id, found.version) == (arxiv_id, version)


@pytest.mark.parametrize(
    ("path", "arxiv_id", "categories"),
    [
        # RSS/Atom listings: primary first, the others alphabetical (see parse.py).
        (BIG_RSS, "2411.16552", ("stat.AP", "cs.LG", "econ.EM", "stat.ME", "stat.ML")),
        (BIG_RSS, "2411.17737", ("math.RA", "math.CO")),
        (SMALL_RSS, "2205.06398", ("stat.ME", "stat.AP", "stat.ML")),
        (ATOM_LISTING, "2402.10149", ("hep-ph", "cs.LG", "hep-ex")),
        (ID_LIST_V2, "1111.2011", ("cond-mat.str-el", "cond-mat.stat-mech")),
        (JAMES_AKL, "2510.14968", ("cs.RO", "cs.AI", "cs.CV", "cs.LG", "cs.SY", "eess.SY")),
        (WATAKANDAI, "2012.13240", ("cs.RO", "math.OC")),
        (API_AFFILIATIONS, "astro-ph/0601001", ("astro-ph",)),
        (GET_RECORD, "1302.2146", ("hep-ph", "hep-ex")),
        (LIST_RECORDS, "0704.0716", ("math-ph", "math.MP")),
        (
            OAI_SINGLE,
            "1401.2122",
            ("math.AP", "hep-th", "math-ph", "math.DG", "math.MP", "nlin.SI"),
        ),
    ],
)
def test_categories_primary_first(path: str, arxiv_id: str, categories: tuple[str, ...]) -> None:
    assert paper(path, arxiv_id).categories == categories


def test_api_primary_category_moves_to_front() -> None:
    data = edited(
        JAMES_AKL,
        (rb'(<arxiv:primary_category [^>]*term=)"cs.RO"', rb'\1"cs.LG"'),
        count=1,
    )
    found = parse_feed(data).papers[0]
    assert found.categories == ("cs.LG", "cs.RO", "cs.AI", "cs.CV", "cs.SY", "eess.SY")
    assert found.primary_category == "cs.LG"


# --- Authors ------------------------------------------------------------------------


def test_34_authors_in_order_with_mojibake_kept() -> None:
    names = paper(API_34_AUTHORS, "1707.08567").author_names
    assert len(names) == 34
    assert names[0] == "Kees A. Schouhamer Immink"
    assert names[29:] == (
        "Fons van der Sommen",
        "A. J. Han Vinck",
        "Tadashi Wadayama",
        "Dirk WÃ¼bben",  # mojibake recorded by arXiv itself: left as it is
        "Hirosuke Yamamoto",
    )


@pytest.mark.parametrize(
    ("path", "arxiv_id", "authors"),
    [
        (
            API_AFFILIATIONS,
            "astro-ph/0601001",
            (
                Author("Andrew Gould", ("Ohio State",)),
                Author("Susan Dorsher", ("Ohio State",)),
                Author("B. Scott Gaudi", ("CfA",)),
                Author("Andrzej Udalski", ("Warsaw University Observatory",)),
            ),
        ),
        (
            WATAKANDAI,
            "2012.12142",
            (
                Author(
                    "Kapil D. Katyal",
                    (
                        "Johns Hopkins University Applied Physics Lab",
                        "Dept. of Comp. Sci., Johns Hopkins University",
                    ),
                ),
                *(
                    Author(name, ("Johns Hopkins University Applied Physics Lab",))
                    for name in ("Adam Polevoy", "Joseph Moore", "Craig Knuth", "Katie M. Popek")
                ),
            ),
        ),
        (
            WATAKANDAI,
            "2012.11345",
            tuple(
                Author(n)
                for n in ("Branimir Ivšić", "Zvonimir Šipuš", "Juraj Bartolić", "Josip Babić")
            ),
        ),
        (
            BIG_RSS,
            "2411.17753",
            (
                Author(
                    "Aleteia Araujo",
                    ("University of Brasilia Brazil, The University of Melbourne Australia",),
                ),
                Author("Breno Costa", ("University of Brasilia Brazil",)),
                Author("Joao Bachiega Jr", ("University of Brasilia Brazil",)),
                Author("Leonardo R. Carvalho", ("University of Brasilia Brazil",)),
                Author("Rajkumar Buyya", ("The University of Melbourne Australia",)),
            ),
        ),
        (
            SMALL_RSS,
            "2609.26820",
            tuple(map(Author, ("Naser Mansour", "Sidahmed Benabderrahmane", "Ameer Rahwan"))),
        ),
        (BIG_RSS, "2411.17856", (Author("Hongni Jin"), Author("Kenneth M. Merz Jr"))),
        (
            ATOM_LISTING,
            "2401.08875",
            tuple(map(Author, ("Jiaming Tang", "Jingxuan Wen", "Liping Jing"))),
        ),
        (
            GET_RECORD,
            "1302.2146",
            tuple(
                map(
                    Author, ("Joshua Berger", "Maxim Perelstein", "Michael Saelim", "Philip Tanedo")
                )
            ),
        ),
        (
            LIST_RECORDS,
            "0704.0471",
            tuple(map(Author, ("D.V. Shetty", "S.J. Yennello", "G.A. Souliotis"))),
        ),
        (LIST_RECORDS, "0704.1109", (Author("Valeria M. Rosa"), Author("Patricio S. letelier"))),
        (
            OAI_MULTI,
            "1604.05585",
            tuple(
                Author(name, ("on behalf of Planck Collaboration",))
                for name in (
                    "Günter Burigana",
                    "Tiziana Trombetti",
                    "Daniela Paoletti",
                    "Nazzareno Mandolesi",
                    "Paolo Natoli",
                )
            ),
        ),
    ],
)
def test_authors_in_order_with_affiliations(
    path: str, arxiv_id: str, authors: tuple[Author, ...]
) -> None:
    assert paper(path, arxiv_id).authors == authors


def test_rss_author_with_affiliation_containing_commas_and_and() -> None:
    authors = paper(BIG_RSS, "2411.17817").authors
    assert len(authors) == 8
    assert authors[0] == Author(
        "Tianliang Yan",
        ("University of Birmingham, School of Physics and Astronomy, Birmingham, United Kingdom",),
    )
    assert authors[-1].name == "Denis Martynov"


def test_oai_arxiv_format_skips_punctuation_only_author() -> None:
    names = paper(OAI_MULTI, "1606.07538").author_names
    assert names[:3] == ("Super-Kamiokande Collaboration", "K. Abe", "Y. Suzuki")


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("A. Smith, B. Jones and C. Wu", ("A. Smith", "B. Jones", "C. Wu")),
        ("A. Smith, B. Jones, and C. Wu", ("A. Smith", "B. Jones", "C. Wu")),
        ("A. Smith and B. Jones", ("A. Smith", "B. Jones")),
        ("John Smith, Jr., Ann Lee", ("John Smith Jr.", "Ann Lee")),
        ("Ann Anderson, Sandra Andrews", ("Ann Anderson", "Sandra Andrews")),
        ("X (Andrew and Peggy Dept., Caltech), Y", ("X", "Y")),
        ("Bal\\'azs Szegedy,\n  Ren\\'e Thom", ("Bal\\'azs Szegedy", "Ren\\'e Thom")),
        ("A (open paren, B", ("A",)),
        ("", ()),
        (" , and ", ()),
    ],
)
def test_split_authors(text: str, names: tuple[str, ...]) -> None:
    assert tuple(a.name for a in fx.split_authors(text)) == names


def test_split_authors_nested_parentheses_stay_in_affiliation() -> None:
    authors = fx.split_authors("A. Smith (Dept. of X (Y), Univ. Z), B. Lee (W)")
    assert authors == (Author("A. Smith", ("Dept. of X (Y), Univ. Z",)), Author("B. Lee", ("W",)))


# --- Text: whitespace, LaTeX, non-ASCII, invisible characters -----------------------


@pytest.mark.parametrize(
    ("path", "arxiv_id", "title"),
    [
        (
            ID_LIST_V2,
            "1111.2011",
            "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large "
            "Connectivity Limit",
        ),
        (
            JAMES_AKL,
            "2510.14968",
            "RDD: Retrieval-Based Demonstration Decomposer for Planner Alignment in "
            "Long-Horizon Tasks",
        ),
        (
            LIST_RECORDS,
            "0704.0471",
            "Density dependence of the symmetry energy and the nuclear equation of state: "
            "A Dynamical and Statistical model perspective",
        ),
        (
            LIST_RECORDS,
            "0704.1586",
            "Core excitation in the elastic scattering and breakup of $^{11}$Be on protons",
        ),
        (
            BIG_RSS,
            "2411.17737",
            "The Smith normal form of the Q-walk matrix of the Dynkin graph $A_n$",
        ),
        (
            BIG_RSS,
            "2411.17860",
            'The exotic structure of the spectral $\\zeta$-function for the Schr\\"odinger '
            'operator with P\\"oschl--Teller potential',
        ),
        (
            API_TESTING_S20,
            "2306.03845",
            "$Ï\x89$Test: WebView-Oriented Testing for Android Applications",
        ),
    ],
)
def test_titles_joined_and_kept_verbatim(path: str, arxiv_id: str, title: str) -> None:
    assert paper(path, arxiv_id).title == title


@pytest.mark.parametrize(
    ("path", "arxiv_id", "start", "fragment"),
    [
        (
            ZOIA,
            "1601.00001",
            'We extend the Landauer-B\\"uttiker probe formalism',
            "fundamentally distinct $I$-$V$ characteristics",
        ),
        (
            ZOIA,
            "1601.00001",
            "We extend",
            '"dephasing probe" (mimicking only elastic decoherence effects)',
        ),
        (
            OAI_HEP_EX,
            "1706.09418",
            "We investigate the phenomenology",
            "including the $\\bar U\\bar D\\bar D$ models.",
        ),
        (
            OAI_HEP_EX,
            "1707.00874",
            "We investigate the Standard Model",
            "For a DM mass less than $\\mathcal{O}$(TeV), the",
        ),
        (
            ID_LIST_V2,
            "1111.2011",
            "Theoretical description of anisotropic",
            "layered superconductors and coupled",
        ),
        (
            SMALL_RSS,
            "2609.26811",
            "Local learning trains each layer",
            "(48.9 +/- 0.5 vs 46.6 +/- 0.3)",
        ),
        (
            ATOM_LISTING,
            "2609.28553",
            "Drug toxicity prediction is critical",
            "interpretable predictions.",
        ),
        (API_AFFILIATIONS, "astro-ph/0601001", "We derive the frequencies", "limit of V_max<17.5."),
    ],
)
def test_abstracts_clean_with_latex_intact(
    path: str, arxiv_id: str, start: str, fragment: str
) -> None:
    abstract = paper(path, arxiv_id).abstract
    assert abstract.startswith(start)
    assert fragment in abstract


@pytest.mark.parametrize(
    ("path", "arxiv_id", "name"),
    [
        (API_TESTING_S20, None, "Oliver WeiÃ\x9fl"),  # C1 control inside mojibake: kept
        (API_TESTING_S0, None, "Aurora RamÃ\xadrez"),  # soft hyphen inside mojibake: kept
        (API_34_AUTHORS, "1707.08567", "Dirk WÃ¼bben"),
        (BIG_RSS, "2411.17748", "Benjamin R\\'emy"),
    ],
)
def test_author_names_never_repaired(path: str, arxiv_id: str | None, name: str) -> None:
    papers = feed_of(path).papers if arxiv_id is None else (paper(path, arxiv_id),)
    assert any(name in p.author_names for p in papers)


@pytest.mark.parametrize("path", PARSEABLE)
def test_text_fields_are_single_spaced_and_trimmed(path: str) -> None:
    for found in feed_of(path).papers:
        fields = [found.title, found.abstract, found.comment or "", found.journal_ref or ""]
        fields += [a.name for a in found.authors]
        fields += [aff for a in found.authors for aff in a.affiliations]
        for value in fields:
            assert value == " ".join(value.split()), (found.arxiv_id, value[:80])
        assert not found.abstract.startswith("arXiv:")
        assert "Announce Type" not in found.abstract


INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u202e\u200f\x7f"


@pytest.mark.parametrize(
    ("path", "title", "abstract_start", "author"),
    [
        (SMALL_RSS, "The Drift Contract", "Local learning trains", "Fabien Polly"),
        (ATOM_LISTING, "SMILESGNN", "Drug toxicity prediction", "Quang Minh Nguyen"),
        (DCONDREY, "Attention Is All You Need", "The dominant sequence", "Ashish Vaswani"),
        (GET_RECORD, "The Same-Sign Dilepton", "The lack of observation", "Joshua Berger"),
        (OAI_SINGLE, "New integrable", "We introduce a novel", "Sergyeyev"),
    ],
)
def test_invisible_characters_stripped(
    path: str, title: str, abstract_start: str, author: str
) -> None:
    def poison(text: str) -> tuple[bytes, bytes]:
        return re.escape(text.encode()), text.replace(" ", f" {INVISIBLE}").encode()

    clean = feed_of(path).papers[0]
    data = edited(path, poison(title), poison(abstract_start), poison(author), count=1)
    assert data != raw(path)
    dirty = parse_feed(data).papers[0]
    assert (dirty.title, dirty.abstract, dirty.authors) == (
        clean.title,
        clean.abstract,
        clean.authors,
    )


@pytest.mark.parametrize("control", [b"\x0b", b"\x01", b"\x1f", b"\x00"])
def test_control_bytes_forbidden_by_xml_are_dropped(control: bytes) -> None:
    data = edited(SMALL_RSS, (rb"Spectral Updates", b"Spectral" + control + b" Updates"))
    feed = parse_feed(data)
    assert feed.papers[0].title == feed_of(SMALL_RSS).papers[0].title
    assert len(feed.papers) == 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  two\n  lines\tand\r\ntabs  ", "two lines and tabs"),
        ("no\u00a0break", "no break"),
        ("zero\u200bwidth \ufeffbom", "zerowidth bom"),
        ("bell\x07 del\x7f", "bell del"),
        ("bidi \u202eoverride\u202c", "bidi override"),
        ("Wei\u00c3\u009fl", "Wei\u00c3\u009fl"),  # C1 inside mojibake stays
        ("Ram\u00c3\u00adrez", "Ram\u00c3\u00adrez"),  # soft hyphen inside mojibake stays
        ('$\\mathcal{O}(n^2)$ B\\"uttiker', '$\\mathcal{O}(n^2)$ B\\"uttiker'),
        ("Ivšić – “quoted”", "Ivšić – “quoted”"),
        (None, ""),
    ],
)
def test_clean_text(text: str | None, expected: str) -> None:
    assert fx.clean_text(text) == expected


# --- DOI, journal reference, comment, dates -----------------------------------------


@pytest.mark.parametrize(
    ("path", "arxiv_id", "doi", "journal_ref", "comment"),
    [
        (
            ID_LIST_V2,
            "1111.2011",
            "10.1103/PhysRevB.85.115117",
            "Phys. Rev. B 85, 115117 (2012)",
            "8 pages, 3 figures. Published version",
        ),
        (ZOIA, "1601.00001", "10.1063/1.4944470", "J. Chem. Phys. 144, 124107 (2016)", None),
        (
            WATAKANDAI,
            "2012.11345",
            "10.23919/eucap48036.2020.9135568",
            None,
            "2020 14th European Conference on Antennas and Propagation (EuCAP). "
            "arXiv admin note: text overlap with arXiv:2001.03160",
        ),
        (WATAKANDAI, "2012.12142", None, None, None),
        (
            JAMES_AKL,
            "2510.14968",
            None,
            None,
            "39th Conference on Neural Information Processing Systems (NeurIPS 2025); "
            "Project Website: rdd-neurips.github.io",
        ),
        (
            API_AFFILIATIONS,
            "astro-ph/0601001",
            None,
            "ActaAstron.56:1-50,2006",
            "62 pages including 16 figures and 9 tables. Submitted to Acta Astronomica. Full "
            "resolution version at http://www.astronomy.ohio-state.edu/~gould/ogle_hot_jupiters.ps.gz",
        ),
        (SMALL_RSS, "2205.06398", "10.1093/bioinformatics/btac431", None, None),
        (
            BIG_RSS,
            "2411.17758",
            "10.1016/j.segan.2024.101477",
            "Sustainable Energy, Grids and Networks, Volume 39, 2024, 101477, ISSN 2352-4677",
            None,
        ),
        (
            ATOM_LISTING,
            "2609.28553",
            "10.1109/MAPR72750.2026.11685822",
            "2026 International Conference on Multimedia Analysis and Pattern Recognition (MAPR)",
            None,
        ),
        (
            LIST_RECORDS,
            "0704.0471",
            "10.1103/PhysRevC.76.024606",  # the first of two space-separated DOIs
            "Phys.Rev.C76:024606,2007; Erratum-ibid.C76:039902,2007",
            "16 pages, 14 figures",
        ),
        (
            LIST_RECORDS,
            "0704.1586",
            "10.1103/PhysRevC.76.014611",
            "Phys.Rev.C76:014611,2007; Erratum-ibid..C77:049901,2008",
            "5 pages, 4 figures, submitted to Phys. Rev. C",
        ),
        (GET_RECORD, "1302.2146", None, None, "18 pages, 6 figures; v2: References added"),
        (
            OAI_SINGLE,
            "1401.2122",
            "10.1007/s11005-017-1013-4",
            "Lett. Math. Phys. 108 (2018), no. 2, 359-376",
            "16 pages, LaTeX, no figures, revised and abridged, in this version (v5) the typos "
            "were fixed (including some that have unfortunately crept into the published "
            "version too), Letters in Mathematical Physics (2017)",
        ),
    ],
)
def test_doi_journal_ref_comment(
    path: str, arxiv_id: str, doi: str | None, journal_ref: str | None, comment: str | None
) -> None:
    found = paper(path, arxiv_id)
    assert (found.doi, found.journal_ref, found.comment) == (doi, journal_ref, comment)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("path", "arxiv_id", "submitted", "updated"),
    [
        (DCONDREY, "1706.03762", utc(2017, 6, 12, 17, 57, 34), utc(2023, 8, 2, 0, 41, 18)),
        (JAMES_AKL, "2510.14968", utc(2025, 10, 16, 17, 59, 37), utc(2025, 10, 16, 17, 59, 37)),
        (ID_LIST_V2, "1111.2011", utc(2011, 11, 8, 18, 48, 36), utc(2012, 4, 2, 12, 38, 54)),
        (GET_RECORD, "1302.2146", utc(2013, 2, 8, 21, 0, 1), utc(2013, 4, 2, 1, 50, 8)),
        (LIST_RECORDS, "0704.0716", utc(2007, 4, 5, 12, 45, 3), utc(2008, 11, 14, 9, 7, 25)),
        (OAI_SINGLE, "1401.2122", utc(2014, 1, 9), utc(2017, 10, 23)),
        (OAI_MULTI, "1601.03238", utc(2016, 1, 13), utc(2016, 1, 13)),
        (SMALL_RSS, "2609.26811", None, None),
        (ATOM_LISTING, "2609.28553", None, None),
    ],
)
def test_submitted_and_updated_are_aware_utc(
    path: str, arxiv_id: str, submitted: datetime | None, updated: datetime | None
) -> None:
    found = paper(path, arxiv_id)
    assert (found.submitted, found.updated) == (submitted, updated)
    for value in (found.submitted, found.updated):
        assert value is None or value.utcoffset() == timedelta(0)


# --- Empty results and error documents ----------------------------------------------


@pytest.mark.parametrize(
    "path", [API_EMPTY, API_EMPTY_2, EMPTY_RSS, OAI_RAW + "ErrorResponseNoRecordsMatch.xml"]
)
def test_empty_results_are_empty_feeds(path: str) -> None:
    feed = feed_of(path)
    assert (feed.papers, feed.skipped, feed.resumption_token) == ((), 0, None)


@pytest.mark.parametrize(
    ("path", "error", "fragment"),
    [
        (API_ERROR, ArxivApiError, "arXiv API error: incorrect id format for abc"),
        (ERROR_RSS, ArxivApiError, "Bad archive 'astroph'. Valid archive names are: astro-ph,"),
        (OAI_RAW + "ErrorResponseBadArgument.xml", OaiError, "illegal argument 'identifier'"),
        (OAI_RAW + "ErrorResponseBadResumptionToken.xml", OaiError, "is illegal for this"),
        (OAI_RAW + "ErrorResponseBadVerb.xml", OaiError, "Verb 'wah' not implemented."),
        (OAI_RAW + "ErrorResponseIdDoesNotExist.xml", OaiError, "'oai:arXiv.org:0813.2274'"),
    ],
)
def test_error_documents_raise(path: str, error: type[FeedError], fragment: str) -> None:
    with pytest.raises(error) as caught:
        parse_feed(raw(path))
    assert isinstance(caught.value, FeedError)
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (OAI_RAW + "ErrorResponseBadArgument.xml", "badArgument"),
        (OAI_RAW + "ErrorResponseBadResumptionToken.xml", "badResumptionToken"),
        (OAI_RAW + "ErrorResponseBadVerb.xml", "badVerb"),
        (OAI_RAW + "ErrorResponseIdDoesNotExist.xml", "idDoesNotExist"),
        (
            OAI_RAW + "ErrorResponseNoRecordsMatch.xml",  # same layout, another real code
            "cannotDisseminateFormat",
        ),
    ],
)
def test_oai_error_code(path: str, code: str) -> None:
    data = edited(path, (rb'code="\w+"', f'code="{code}"'.encode()))
    with pytest.raises(OaiError) as caught:
        parse_feed(data)
    assert caught.value.code == code
    assert str(caught.value).startswith(f"OAI-PMH error {code}: ")
    assert caught.value.message


HTML_PAGE = b"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>503 Service Unavailable</title></head>
<body><h1>Service Unavailable</h1><p>Try again later.</p></body>
</html>
"""


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (HTML_PAGE, "HTML page: '503 Service Unavailable'"),
        (b"\n  <html><body>Rate exceeded.</body></html>", "HTML"),
        (b'<?xml version="1.0"?>\n<!DOCTYPE html><html><p>unclosed</html>', "HTML"),
        (b"<div><p>broken <b>markup</p></div>\n<html>", "HTML"),
        (b"", "empty response body"),
        (b" \r\n\t", "empty response body"),
        (b"Rate exceeded.", "b'Rate exceeded.'"),
        (b'{"error": "not found"}', "starts with"),
    ],
)
def test_not_xml(data: bytes, fragment: str) -> None:
    with pytest.raises(NotXmlError) as caught:
        parse_feed(data)
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "path", [BIG_RSS, SMALL_RSS, ATOM_LISTING, ID_LIST_V2, DCONDREY, LIST_RECORDS, OAI_MULTI]
)
def test_truncated_xml(path: str) -> None:
    data = raw(path)
    with pytest.raises(MalformedFeedError, match=r"^invalid XML: .*line \d+"):
        parse_feed(data[: len(data) // 2])


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"<?xml version='1.0'?><note><to>Tove</to></note>", "root element <note>"),
        (
            b'<feed xmlns="http://www.w3.org/2005/Atom"><id>urn:example:feed</id></feed>',
            "Atom feed is not from arXiv",
        ),
        (b'<rss version="2.0"></rss>', "no <channel>"),
        (
            b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><Identify/></OAI-PMH>',
            "neither ListRecords nor GetRecord",
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><rss>&lol;</rss>',
            "entity declarations",
        ),
        (b"<rss><channel><title>x</title></channel>", "invalid XML"),
    ],
)
def test_malformed_or_unknown_xml(data: bytes, fragment: str) -> None:
    with pytest.raises(MalformedFeedError) as caught:
        parse_feed(data)
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_control_bytes_do_not_rescue_truncated_xml() -> None:
    data = edited(SMALL_RSS, (rb"Spectral Updates", b"Spectral\x0b Updates"))
    with pytest.raises(MalformedFeedError):
        parse_feed(data[: len(data) // 2])


# --- Damaged entries ----------------------------------------------------------------

NO_AUTHORS_NO_ABSTRACT = {
    SMALL_RSS: (
        (rb"<dc:creator>Fabien Polly</dc:creator>", b""),
        (rb"(Announce Type: new \nAbstract: )Local learning.*?(</description>)", rb"\1\2"),
    ),
    ATOM_LISTING: (
        (rb"<dc:creator>Quang Minh.*?</dc:creator>", b""),
        (rb"<summary>arXiv:2609.28553v1.*?</summary>", b""),
    ),
    DCONDREY: ((rb"\s*<author>.*</author>", b""), (rb"<summary>.*</summary>", b"<summary/>")),
    ID_LIST_V2: ((rb"\s*<author>.*</author>", b""), (rb"<summary>.*</summary>", b"")),
    GET_RECORD: ((rb"<authors>.*</authors>", b""), (rb"<abstract>.*</abstract>", b"")),
    OAI_SINGLE: ((rb"<authors>.*</authors>", b"<authors/>"), (rb"<abstract>.*</abstract>", b"")),
}


@pytest.mark.parametrize("path", sorted(NO_AUTHORS_NO_ABSTRACT))
def test_entry_without_authors_or_abstract(path: str) -> None:
    feed = parse_feed(edited(path, *NO_AUTHORS_NO_ABSTRACT[path]))
    first = feed.papers[0]
    assert (first.authors, first.abstract) == ((), "")
    assert first.arxiv_id == feed_of(path).papers[0].arxiv_id
    assert first.title == feed_of(path).papers[0].title
    assert len(feed.papers) == len(feed_of(path).papers)


def test_rss_item_with_only_a_title_and_guid() -> None:
    data = edited(
        SMALL_RSS,
        (rb"<description>arXiv:2609.26811v1.*?</description>", b""),
        (rb"<dc:creator>Fabien Polly</dc:creator>", b""),
        (rb"<arxiv:announce_type>new</arxiv:announce_type>", b""),
        count=1,
    )
    first = parse_feed(data).papers[0]
    assert (first.arxiv_id, first.version, first.abstract, first.authors) == (
        "2609.26811",
        1,
        "",
        (),
    )
    assert first.announce_type is AnnounceType.NEW


BAD_IDS = {
    SMALL_RSS: (
        (rb"oai:arXiv.org:2609.26811v1", b"oai:arXiv.org:garbage"),
        (rb"https://arxiv.org/abs/2609.26811", b"https://arxiv.org/abs/garbage"),
        (rb"arXiv:2609.26811v1 Announce", b"arXiv:garbage Announce"),
    ),
    ATOM_LISTING: (
        (rb"oai:arXiv.org:2609.28553v1", b"oai:arXiv.org:x"),
        (rb"arXiv:2609.28553v1 Announce", b"arXiv:x Announce"),
    ),
    DEL_MAESTRO: ((rb"http://arxiv.org/abs/cond-mat/0412498v1</id>", b"urn:nothing</id>"),),
    LIST_RECORDS: (
        (rb"<identifier>oai:arXiv.org:0704.0471</identifier>", b"<identifier>x</identifier>"),
        (rb"<id>0704.0471</id>", b"<id>not-an-id</id>"),
    ),
}


@pytest.mark.parametrize("path", sorted(BAD_IDS))
def test_entries_with_unparseable_ids_are_skipped_and_counted(path: str) -> None:
    feed = parse_feed(edited(path, *BAD_IDS[path]))
    assert feed.skipped == 1
    assert len(feed.papers) == len(feed_of(path).papers) - 1


def test_rss_guid_without_version_takes_version_from_description() -> None:
    data = edited(SMALL_RSS, (rb"oai:arXiv.org:2009.13987v3", b"oai:arXiv.org:2009.13987"))
    found = parse_feed(data).papers[3]
    assert (found.arxiv_id, found.version) == ("2009.13987", 3)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"replace-cross", AnnounceType.REPLACE_CROSS),
        (b"CROSS", AnnounceType.CROSS),
        (b"withdrawn", AnnounceType.REPLACE),  # unknown: never counted as a new paper
    ],
)
def test_announce_type_values(value: bytes, expected: AnnounceType) -> None:
    data = edited(
        SMALL_RSS, (rb"<arxiv:announce_type>new<", b"<arxiv:announce_type>" + value + b"<"), count=1
    )
    assert parse_feed(data).papers[0].announce_type is expected


def test_deleted_oai_record_is_skipped() -> None:
    data = edited(
        LIST_RECORDS,
        (rb"<header>(\s*<identifier>oai:arXiv.org:0704.0716)", rb'<header status="deleted">\1'),
    )
    feed = parse_feed(data)
    assert feed.skipped == 1
    assert "0704.0716" not in {p.arxiv_id for p in feed.papers}


# --- OAI oai_dc ---------------------------------------------------------------------

# A real arXiv oai_dc record (physics/0411239) in arXiv's GetRecord envelope.
OAI_DC_RECORD = b"""<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<responseDate>2015-06-23T13:24:04Z</responseDate>
<request verb="GetRecord" identifier="oai:arXiv.org:physics/0411239"
  metadataPrefix="oai_dc">http://export.arxiv.org/oai2</request>
<GetRecord><record><header>
 <identifier>oai:arXiv.org:physics/0411239</identifier>
 <datestamp>2009-11-10</datestamp>
 <setSpec>physics:physics</setSpec>
</header><metadata>
<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
  xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:title>Photoionization of the fullerene ion C60+</dc:title>
<dc:creator>Polozkov, R. G.</dc:creator>
<dc:creator>Ivanov, V. K.</dc:creator>
<dc:creator>Solov'yov, A. V.</dc:creator>
<dc:subject>Physics - Atomic and Molecular Clusters</dc:subject>
<dc:subject>Physics - Atomic Physics</dc:subject>
<dc:description>  Photoionization cross section of the fullerene ion C60+ has been calculated
within a single-electron approximation and also by using a consistent many-body
theory accounting for many-electron correlations.
</dc:description>
<dc:description>Comment: 8 pages, 3 figures</dc:description>
<dc:date>2004-11-26</dc:date>
<dc:type>text</dc:type>
<dc:identifier>http://arxiv.org/abs/physics/0411239</dc:identifier>
<dc:identifier>doi:10.1088/0953-4075/38/24/001</dc:identifier>
</oai_dc:dc>
</metadata></record></GetRecord></OAI-PMH>
"""


def test_oai_dc_record() -> None:
    (found,) = parse_feed(OAI_DC_RECORD).papers
    assert (found.arxiv_id, found.version) == ("physics/0411239", 1)
    assert found.title == "Photoionization of the fullerene ion C60+"
    assert found.author_names == ("R. G. Polozkov", "V. K. Ivanov", "A. V. Solov'yov")
    assert found.abstract.startswith("Photoionization cross section of the fullerene ion C60+")
    assert found.abstract.endswith("many-electron correlations.")
    assert (found.comment, found.doi, found.journal_ref) == (
        "8 pages, 3 figures",
        "10.1088/0953-4075/38/24/001",
        None,
    )
    assert (found.submitted, found.updated) == (utc(2004, 11, 26), utc(2004, 11, 26))
    assert found.categories == ()  # dc:subject holds subject names, not category codes


# --- Speed --------------------------------------------------------------------------


def test_the_big_real_feed_parses_every_item() -> None:
    """Its speed is measured by bench/bench_ingest.py, not asserted here: a timed test fails
    on a busy machine for no fault of the code."""
    assert len(parse_feed(raw(BIG_RSS)).papers) == 1504
