"""Papers like these, pure: arXiv ids as typed, BibTeX files (hostile ones too), a set's
profile, its calibration and matching many sets at once (`bot.topics.like`, `bot.topics.bibtex`)."""

from __future__ import annotations

import random
from functools import cache

import pytest

from bench.relevance_catalog import CATALOG_DIR, load_labels, load_split
from bot.domain import Paper
from bot.topics.bibtex import MAX_BIB_BYTES, BibtexError, bibtex_ids
from bot.topics.like import (
    FIRE_SHARE,
    MAX_LIKE,
    MIN_THRESHOLD,
    LikeIndex,
    LikeInputError,
    LikeProfile,
    background,
    build_profile,
    bundled_background,
    calibrated_profile,
    like_tag,
    parse_ids,
    stored_profiles,
    threshold_for,
)
from bot.topics.text_model import paper_vector


@cache
def dev() -> dict[str, Paper]:
    return load_split("dev")


def positives(slug: str) -> list[Paper]:
    labels = load_labels(CATALOG_DIR / "labels" / "dev" / f"{slug}.jsonl")
    return [dev()[lb.arxiv_id] for lb in labels if lb.label]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("2401.01234", ["2401.01234"]),
        ("2401.01234v3", ["2401.01234"]),
        ("arXiv:2401.01234", ["2401.01234"]),
        ("https://arxiv.org/abs/2401.01234v2", ["2401.01234"]),
        ("http://export.arxiv.org/abs/2401.01234", ["2401.01234"]),
        ("arxiv.org/pdf/2401.01234v1.pdf", ["2401.01234"]),
        ("https://www.arxiv.org/pdf/2401.01234", ["2401.01234"]),
        ("10.48550/arXiv.2401.01234", ["2401.01234"]),
        ("https://doi.org/10.48550/ARXIV.2401.01234", ["2401.01234"]),
        ("hep-th/9901001v2", ["hep-th/9901001"]),
        ("math.GT/0309136", ["math.GT/0309136"]),
        ("0704.0001, 2401.01234  0704.0001v2", ["0704.0001", "2401.01234"]),
    ],
)
def test_ids_in_every_form(typed: str, expected: list[str]) -> None:
    assert parse_ids(typed) == expected


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "Which papers?"),
        ("  ,, ", "Which papers?"),
        ("2401.123", '"2401.123" is not an arXiv id'),
        ("2401.01234 attention", '"attention" is not an arXiv id'),
        ("<b>2401</b>", "is not an arXiv id"),
        ("x" * 500, "…"),
        (" ".join(f"2401.{n:05d}" for n in range(MAX_LIKE + 1)), f"at most {MAX_LIKE}"),
    ],
)
def test_bad_ids_are_one_line(typed: str, message: str) -> None:
    with pytest.raises(LikeInputError, match=message[:20].replace("?", r"\?")) as error:
        parse_ids(typed)
    assert "\n" not in str(error.value) and len(str(error.value)) < 200


def test_fifty_ids_are_a_set_and_the_tag_ignores_order() -> None:
    ids = [f"2401.{n:05d}" for n in range(MAX_LIKE)]
    assert parse_ids(" ".join(ids)) == ids
    assert like_tag(ids) == like_tag(reversed(ids)) != like_tag(ids[1:])
    assert like_tag(ids).startswith("l:")


BIB = rb"""
% a reading list
@article{vaswani2017,
  title = {Attention Is All You Need},
  author = {Vaswani, Ashish and others},
  journal = {arXiv preprint arXiv:1706.03762},
  year = {2017}
}
@misc{eprint_entry,
  title={{Deep} {RL}},
  eprint={2401.01234v2},
  archivePrefix={arXiv},
  primaryClass={cs.LG},
  note={Extends arXiv:2001.00001}
}
@inproceedings{doi_entry, doi = "10.48550/ARXIV.2105.00002", booktitle = {NeurIPS}}
@misc{url_entry, howpublished = {\url{https://arxiv.org/pdf/2302.12345v3.pdf}}}
@article{hal_entry, eprint = {hal-01234567}, archivePrefix = {HAL}}
@article{old_style, eprint = {hep-th/9901001}}
@book{no_arxiv, title = {Pattern Recognition}, publisher = {Springer}, pages = {1234.5678}}
@misc{duplicate, url = {https://arxiv.org/abs/2401.01234}}
"""


def test_bibtex_ids_each_entry_once_in_order() -> None:
    assert bibtex_ids(BIB) == [
        "1706.03762",
        "2401.01234",
        "2105.00002",
        "2302.12345",
        "hep-th/9901001",
    ]


def test_bibtex_in_latin1_and_with_a_bom() -> None:
    latin = "@article{a, title={Über Müller}, eprint={2401.01234}}".encode("latin-1")
    assert bibtex_ids(latin) == ["2401.01234"]
    assert bibtex_ids(b"\xef\xbb\xbf@misc{a, eprint={2401.01234}}") == ["2401.01234"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"@misc{a, eprint={2401.01234}}" + b" " * MAX_BIB_BYTES, "too large"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not text"),
        (bytes(range(1, 32)) * 10 + b"\xff\xfe", "not text"),
        (b"%PDF-1.7\n\x00\x01 arXiv:2401.01234", "not text"),
        (b"", "no arXiv id"),
        (b"@book{x, title={No preprint here}, year={2020}}", "no arXiv id"),
        (b"2401.01234 outside any entry", "no arXiv id"),
        ("@misc{a, title={\u202e\u200b<script>}, eprint={not-an-id}}".encode(), "no arXiv id"),
    ],
)
def test_refused_files_are_one_line(data: bytes, message: str) -> None:
    with pytest.raises(BibtexError, match=message) as error:
        bibtex_ids(data)
    assert "\n" not in str(error.value)


def test_a_huge_but_valid_entry_list_is_read() -> None:
    entries = b"".join(b"@misc{e%d, eprint={2401.%05d}}\n" % (n, n) for n in range(5000))
    assert len(bibtex_ids(entries)) == 5000


def test_threshold_lets_at_most_the_share_through() -> None:
    scores = [n / 1000 for n in range(1000)]
    threshold = threshold_for(scores, 0.02)
    assert sum(s > threshold for s in scores) <= 20
    assert sum(s >= threshold for s in scores) >= 20
    assert threshold_for([0.0] * 100) == MIN_THRESHOLD
    assert threshold_for([]) == MIN_THRESHOLD


def test_a_set_fires_on_about_two_percent_of_another_day() -> None:
    """Calibrated on the bundled day, a set of real papers fires on at most about 2% of a
    day it never saw (another source, another date of the dev split)."""
    papers = positives("federated-learning")[:10]
    profile = calibrated_profile(papers, stored=[])
    day = [p for p in dev().values() if p.arxiv_id.startswith("2508.")][:1000]
    fired = sum(profile.score(paper_vector(p)) > profile.threshold for p in day)
    assert profile.threshold >= MIN_THRESHOLD
    assert fired <= 2 * FIRE_SHARE * len(day)


def test_stored_papers_calibrate_when_there_are_enough() -> None:
    papers = positives("federated-learning")[:10]
    own = [p.arxiv_id for p in papers]
    stored = random.Random(7).sample(sorted(dev().values(), key=lambda p: p.arxiv_id), 400)
    stored += papers  # the set's own papers are never its background
    assert background(stored, own) == [p for p in stored if p.arxiv_id not in own]
    assert background(stored[:50], own) == list(bundled_background())
    assert len(bundled_background()) > 500


def test_a_set_finds_its_topic_and_not_another() -> None:
    fl = positives("federated-learning")
    profile = calibrated_profile(fl[:10], stored=[])
    rest = fl[10:]
    other = positives("text-to-sql")
    found = sum(profile.score(paper_vector(p)) > profile.threshold for p in rest)
    wrong = sum(profile.score(paper_vector(p)) > profile.threshold for p in other)
    assert found >= len(rest) * 0.7
    assert wrong == 0


def test_the_index_agrees_with_one_set_at_a_time() -> None:
    papers = sorted(dev().values(), key=lambda p: p.arxiv_id)
    rng = random.Random(3)
    profiles = {}
    for _ in range(40):
        chosen = rng.sample(papers, 5)
        profiles[like_tag(p.arxiv_id for p in chosen)] = calibrated_profile(chosen, [])
    index = LikeIndex(profiles)
    listing = rng.sample(papers, 400)
    vectors = [paper_vector(paper) for paper in listing]
    many = index.tag_many(listing, vectors)
    for paper, vector, batch in zip(listing, vectors, many, strict=True):
        own = {t for t, pr in profiles.items() if paper.arxiv_id in pr_ids(pr)}
        expected = {t for t, pr in profiles.items() if pr.score(vector) > pr.threshold} - own
        assert set(index.tag(paper)) == expected
        assert batch == index.tag(paper, vector)
    assert sum(map(len, many)) > 0


def test_why_names_the_closest_paper_of_the_set_and_json_round_trips() -> None:
    fl = positives("federated-learning")
    sql = positives("text-to-sql")
    profile = build_profile([sql[0], fl[0], fl[1]])
    again = LikeProfile.from_json(profile.to_json(), 0.1)
    assert again.threshold == 0.1 and [m.arxiv_id for m in again.members] == [
        sql[0].arxiv_id,
        fl[0].arxiv_id,
        fl[1].arxiv_id,
    ]
    member, similarity = again.closest(paper_vector(sql[1]))
    assert member.arxiv_id == sql[0].arxiv_id and similarity > 0
    assert again.why(paper_vector(sql[1])).startswith(f"most like {sql[0].arxiv_id} “")
    broken = stored_profiles([("l:1", "{not json", 0.1), ("l:2", profile.to_json(), 0.2)])
    assert list(broken) == ["l:2"]


def test_hostile_titles_are_kept_as_text_and_cut() -> None:
    paper = Paper("2401.01234", "<b>" + "\u202eA" * 300 + "</b> $\\alpha$", "x y z")
    (member,) = build_profile([paper]).members
    assert len(member.title) <= 120 and member.title.startswith("<b>")
    (again,) = LikeProfile.from_json(build_profile([paper]).to_json(), 0.1).members
    assert (again.arxiv_id, again.title) == (member.arxiv_id, member.title)
    assert again.vector == pytest.approx(member.vector, abs=1e-4)


def pr_ids(profile: LikeProfile) -> set[str]:
    return {m.arxiv_id for m in profile.members}
