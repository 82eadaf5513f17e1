"""Followed author names (`bot.topics.authors`): the name-pair fixture (variants of one
person and near-homonyms from the dev corpus), the stored form, bad names, affiliations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.domain import Author, Paper
from bot.topics.authors import (
    MAX_AUTHOR_CHARS,
    AuthorIndex,
    AuthorNameError,
    author_patterns,
    parse_author,
)

PAIRS = Path(__file__).parents[1] / "fixtures" / "authors" / "name_pairs.jsonl"


def pairs() -> list[dict]:
    return [json.loads(line) for line in PAIRS.read_text("utf-8").splitlines() if line]


def test_the_fixture_is_big_enough_and_has_both_kinds() -> None:
    rows = pairs()
    assert len(rows) >= 50
    assert sum(r["match"] for r in rows) >= 20 and sum(not r["match"] for r in rows) >= 20


def test_no_false_match_and_every_variant_matched() -> None:
    wrong = [r for r in pairs() if parse_author(r["followed"]).matches(r["paper"]) != r["match"]]
    assert wrong == []


@pytest.mark.parametrize(
    "typed",
    [
        "Sergey Levine",
        "Levine, Sergey",
        "  sergey   LEVINE ",
        "Ser\u200bgey Levine",
        '"Sergey Levine"',
    ],
)
def test_spellings_of_one_name_are_stored_once(typed: str) -> None:
    pattern = parse_author(typed)
    assert pattern.canonical == "levine, sergey"
    assert pattern.tag == parse_author("Sergey Levine").tag and pattern.tag.startswith("a:")


@pytest.mark.parametrize("row", pairs(), ids=lambda r: r["followed"] + " | " + r["paper"])
def test_the_stored_form_reads_back_to_the_same_pattern(row: dict) -> None:
    pattern = parse_author(row["followed"])
    again = parse_author(pattern.canonical)
    assert again == pattern and again.matches(row["paper"]) == row["match"]


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("", "Which author?"),
        ("   ", "Which author?"),
        ('""', "Which author?"),
        ("S. L.", "family name in full"),
        ("J.-P.", "family name in full"),
        ("... ,,, --", "family name in full"),
        ("\u200b\u200b", "Which author?"),
        ("Levine", "first name or initial"),
        ("x" * (MAX_AUTHOR_CHARS + 1), "too long"),
        ("Sergey Levine @", "affiliation"),
        ("Sergey Levine @ ;;", "affiliation"),
        (" ".join(["Ann"] * 12), "at most"),
    ],
)
def test_names_that_are_no_person_are_refused_in_one_line(typed: str, says: str) -> None:
    with pytest.raises(AuthorNameError) as raised:
        parse_author(typed)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_an_affiliation_narrows_when_the_paper_gives_one() -> None:
    pattern = parse_author("Sergey Levine @Berkeley")
    assert pattern.canonical == "levine, sergey @berkeley"
    assert pattern.matches(Author("Sergey Levine", ("UC Berkeley",)))
    assert pattern.matches(Author("S. Levine", ("University of California, Berkley",)))
    assert not pattern.matches(Author("Sergey Levine", ("Stanford University",)))
    assert pattern.matches(Author("Sergey Levine"))  # no affiliation given: the name decides
    assert not pattern.matches(Author("Yoav Levine", ("UC Berkeley",)))
    assert pattern.tag != parse_author("Sergey Levine").tag


def test_the_index_tags_a_hostile_paper_with_the_name_it_gives() -> None:
    followed = ["levine, sergey", "finn, chelsea", "..., s.", "levine, yoav @tel aviv"]
    index = AuthorIndex(author_patterns(followed))
    assert len(index) == 3  # the unreadable stored name is left out
    paper = Paper(
        "2607.00001",
        "<b>R&amp;D</b> \u202eagents 🤖",
        authors=(
            Author("Chelsea\u200b Finn"),
            Author("S.  Levine", ("UC Berkeley",)),
            Author("Yoav Levine", ("MIT",)),
            Author("\\'Etienne Z\\\"urich"),
        ),
    )
    found = index.tag(paper)
    assert found == {
        parse_author("Chelsea Finn").tag: ("Chelsea Finn",),
        parse_author("Sergey Levine").tag: ("S. Levine",),
    }


def test_the_index_finds_what_comparing_every_pattern_finds() -> None:
    """The index skips patterns by family name and first letter; it must skip none that
    match (the fixture's names, crossed every way, plus transliterated first letters)."""
    rows = pairs()
    names = sorted({r["paper"] for r in rows} | {r["followed"] for r in rows})
    names += ["Ksenia Sobchak", "Xenia Sobchak", "Ümit Yilmaz", "Uemit Yilmaz"]
    patterns = author_patterns([*names, "Xenia Sobchak", "Uemit Yilmaz"])
    index = AuthorIndex(patterns)
    for number, name in enumerate(names):
        paper = Paper(f"2607.{number:05d}", "t", authors=(Author(name),))
        brute = {p.tag for p in patterns if p.matches(name)}
        assert set(index.tag(paper)) == brute, name
    assert index.tag(Paper("2607.99999", "t", authors=(Author("Ksenia Sobchak"),)))


@pytest.mark.parametrize(
    "written",
    [
        "\u202eSergey Levine\u202c",
        "\u2067Sergey\u2069 Levine",
        "Sergey Levine (UC Berkeley)",
        "Sergey\u00adLevine".replace("\u00ad", " \u00ad"),
        "SERGEY LEVINE",
    ],
)
def test_hostile_spellings_of_the_name_still_match(written: str) -> None:
    assert parse_author("Sergey Levine").matches(written)
    assert not parse_author("Yoav Levine").matches(written)
