"""Papers like these, pure: arXiv ids as typed, BibTeX files (hostile ones too), a set's
profile (its words and its catalog topics), its calibration and matching many sets at once
(`bot.topics.like`, `bot.topics.bibtex`)."""

from __future__ import annotations

import math
import random
from functools import cache

import pytest

from bench.relevance_catalog import CATALOG_DIR, load_labels, load_split
from bot.domain import Paper
from bot.topics.bibtex import MAX_BIB_BYTES, BibtexError, bibtex_ids
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.like import (
    FIRE_SHARE,
    MAX_LIKE,
    MIN_THRESHOLD,
    TAG_WEIGHT,
    LikeInputError,
    LikeProfile,
    TagRates,
    build_profile,
    like_tag,
    match_reason,
    parse_ids,
    stored_profiles,
    topic_weights,
)
from bot.topics.like_calibration import (
    background_size,
    bundled_background,
    calibrated_profile,
    described_background,
    left_out_scores,
    recalibrate,
    self_level,
    threshold_for,
)
from bot.topics.like_index import LikeIndex
from bot.topics.tag_rules import catalog_tagger
from bot.topics.tagger import Tagger
from bot.topics.text_model import dot, paper_vector


@cache
def dev() -> dict[str, Paper]:
    return load_split("dev")


@cache
def catalog() -> Catalog:
    return load_catalog()


@cache
def tagger() -> Tagger:
    return catalog_tagger(catalog())


@cache
def tags_of(paper: Paper) -> frozenset[str]:
    """A paper's catalog tags, as ingest's tagger gives them."""
    return frozenset(tagger().tag(paper))


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
    day = [p for p in dev().values() if p.arxiv_id.startswith("2508.")][:1000]
    for slug in ("federated-learning", "large-language-models"):
        papers = positives(slug)[:10]
        for profile, tags in (
            (calibrated_profile(papers, stored=[]), lambda p: ()),
            (calibrated_profile(papers, stored=[], catalog=catalog()), tags_of),
        ):
            fired = sum(profile.score(paper_vector(p), tags(p)) > profile.threshold for p in day)
            assert profile.threshold >= MIN_THRESHOLD
            assert fired <= 2 * FIRE_SHARE * len(day), slug


def test_stored_papers_calibrate_when_there_are_enough() -> None:
    papers = positives("federated-learning")[:10]
    stored = random.Random(7).sample(sorted(dev().values(), key=lambda p: p.arxiv_id), 400)
    stored += papers  # the set's own papers are never its background
    assert list(described_background(stored, None)) == [p.arxiv_id for p in stored]
    assert background_size(stored) == 410 and background_size(stored[:50]) == 0
    bundled = [p.arxiv_id for p in bundled_background()]
    assert list(described_background(stored[:50], None)) == bundled
    assert len(bundled_background()) > 500
    alone = calibrated_profile(papers, stored[:400])
    assert calibrated_profile(papers, stored).threshold == alone.threshold  # own ones left out


def test_recalibration_moves_the_threshold_with_the_background_and_keeps_the_own_level() -> None:
    papers = positives("quantum-machine-learning")[:10]
    own = [p.arxiv_id for p in papers]
    profile = calibrated_profile(papers, [], catalog())  # a new deployment: the bundled day
    kept = LikeProfile.from_json(profile.to_json(), profile.threshold)
    assert kept.own_level == profile.own_level > 0  # stored with the profile
    ranked = sorted(dev().values(), key=lambda p: p.arxiv_id)
    stored = random.Random(3).sample(ranked, 600)
    again = recalibrate(kept, own, described_background(stored, catalog()))
    assert again.threshold >= kept.own_level and again.own_level == kept.own_level
    assert again.topics == kept.topics and again.centroid == kept.centroid  # threshold alone
    scores = [again.score(paper_vector(p), tags_of(p)) for p in stored]
    assert sum(score > again.threshold for score in scores) <= FIRE_SHARE * len(stored)
    # a background full of papers like the set: the budget raises the threshold
    alike = stored[:300] + positives("quantum-machine-learning")[10:] * 5
    crowded = recalibrate(kept, own, described_background(alike, catalog()))
    assert crowded.threshold > again.threshold
    # a level not kept (a profile stored before it was): the budget alone
    old = LikeProfile.from_json(build_profile(papers).to_json(), 0.3)
    assert old.own_level == 0.0 and '"own_level"' not in build_profile(papers).to_json()
    assert recalibrate(old, own, described_background(stored, None)).threshold >= MIN_THRESHOLD


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
    for number in range(40):
        chosen = rng.sample(papers, 5)
        by_topic = catalog() if number % 2 else None  # text-only sets (stored before) too
        profiles[like_tag(p.arxiv_id for p in chosen)] = calibrated_profile(chosen, [], by_topic)
    assert sum(bool(pr.topics) for pr in profiles.values()) == 20
    index = LikeIndex(profiles)
    listing = rng.sample(papers, 400)
    vectors = [paper_vector(paper) for paper in listing]
    tags = [tags_of(paper) for paper in listing]
    many = index.tag_many(listing, vectors, tags)
    for paper, vector, own_tags, batch in zip(listing, vectors, tags, many, strict=True):
        own = {t for t, pr in profiles.items() if paper.arxiv_id in pr_ids(pr)}
        expected = {
            t for t, pr in profiles.items() if pr.score(vector, own_tags) > pr.threshold
        } - own
        assert set(index.tag(paper, tags=own_tags)) == expected
        assert batch == index.tag(paper, vector, own_tags)
    assert sum(map(len, many)) > 0
    assert any(profiles[t].topics for found in many for t in found)


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
    # what /why says of a stored set: the same, or nothing for a profile it cannot read
    assert match_reason(profile.to_json(), 0.1, sql[1], ()) == again.why(paper_vector(sql[1]))
    assert match_reason("{not json", 0.1, sql[1], ()) is None


def test_hostile_titles_are_kept_as_text_and_cut() -> None:
    paper = Paper("2401.01234", "<b>" + "\u202eA" * 300 + "</b> $\\alpha$", "x y z")
    (member,) = build_profile([paper]).members
    assert len(member.title) <= 120 and member.title.startswith("<b>")
    (again,) = LikeProfile.from_json(build_profile([paper]).to_json(), 0.1).members
    assert (again.arxiv_id, again.title) == (member.arxiv_id, member.title)
    assert again.vector == pytest.approx(member.vector, abs=1e-4)


def pr_ids(profile: LikeProfile) -> set[str]:
    return {m.arxiv_id for m in profile.members}


def test_the_topic_profile_weighs_shared_and_rare_topics_most() -> None:
    rates = TagRates(100, {"field": 40, "narrow": 1})
    sets = [{"field", "narrow"}, {"field", "narrow"}, {"field", "narrow", "odd"}, {"field"}]
    weights = topic_weights(sets, rates)
    assert sum(weights.values()) == pytest.approx(TAG_WEIGHT, abs=1e-3)
    # three of four papers carry "narrow", all four the common field: the rare one counts most
    assert weights["narrow"] > weights["field"] > 0
    # "odd" is rarer still (no background paper) but only one paper of the set carries it
    assert weights["narrow"] > weights["odd"]
    expected = (0.75**3 * rates.idf("narrow") ** 2) / (1.0 * rates.idf("field") ** 2)
    assert weights["narrow"] / weights["field"] == pytest.approx(expected, rel=1e-2)
    assert rates.idf("odd") == pytest.approx(math.log(101))
    assert topic_weights([], rates) == {}
    assert topic_weights([{"all"}], TagRates(3, {"all": 3})) == {}  # every paper has it


def test_a_set_profile_has_its_topic_first_named_as_the_catalog_names_it() -> None:
    profile = calibrated_profile(positives("federated-learning")[:10], [], catalog())
    heaviest = max(profile.topics, key=lambda t: profile.topics[t])
    assert heaviest == "federated-learning"
    assert profile.names[heaviest] == catalog().by_slug(heaviest).name
    assert sum(profile.topics.values()) == pytest.approx(TAG_WEIGHT, abs=1e-2)
    assert calibrated_profile(positives("federated-learning")[:10], []).topics == {}


def test_the_score_is_the_cosine_plus_the_weights_of_the_shared_topics() -> None:
    fl = positives("federated-learning")
    profile = calibrated_profile(fl[:10], [], catalog())
    paper = fl[10]
    vector, tags = paper_vector(paper), tags_of(paper)
    assert "federated-learning" in tags
    cosine = dot(vector, profile.centroid)
    assert profile.score(vector) == pytest.approx(cosine)
    assert profile.score(vector, tags) == pytest.approx(
        cosine + sum(profile.topics.get(t, 0.0) for t in tags)
    )
    twice = ["federated-learning", "federated-learning"]  # a tag counts once
    assert profile.score({}, twice) == pytest.approx(profile.topics["federated-learning"])
    assert profile.score({}, ["no-such-topic"]) == 0.0


def test_topics_find_the_papers_the_words_miss() -> None:
    """Code generation: the set's words are too common to clear the budget alone (the text
    score found about 4% of the rest in the bench); its topic finds most of them."""
    code = positives("code-generation")
    by_topic = calibrated_profile(code[:10], [], catalog())
    by_text = calibrated_profile(code[:10], [])
    rest = code[10:]
    found = sum(by_topic.score(paper_vector(p), tags_of(p)) > by_topic.threshold for p in rest)
    found_by_text = sum(by_text.score(paper_vector(p)) > by_text.threshold for p in rest)
    assert found >= 0.6 * len(rest) > found_by_text
    other = positives("federated-learning")
    wrong = sum(by_topic.score(paper_vector(p), tags_of(p)) > by_topic.threshold for p in other)
    assert wrong <= 0.1 * len(other)


def test_the_threshold_is_never_under_what_most_of_the_set_reaches_left_out() -> None:
    assert self_level([]) == 0.0
    assert self_level([0.9, 0.5, 0.7, 0.8, 0.6, 0.95, 0.85, 0.75, 0.65, 0.55]) == 0.5499
    papers = positives("quantum-machine-learning")[:10]
    vectors = [paper_vector(p) for p in papers]
    tags = [tags_of(p) for p in papers]
    rates = TagRates.of([tags_of(p) for p in bundled_background()])
    own = left_out_scores(papers, vectors, tags, rates)
    assert len(own) == 10 and left_out_scores(papers[:2], vectors[:2], tags[:2], rates) == []
    profile = calibrated_profile(papers, [], catalog())
    assert profile.threshold >= self_level(own)
    assert sum(score > profile.threshold for score in own) >= 9


def test_a_profile_stored_before_topics_scores_by_its_words_alone() -> None:
    paper = positives("federated-learning")[0]
    stored = (  # as the first version of like sets stored a profile: no "topics"
        '{"centroid":{"federated":0.8,"federated learning":0.6},'
        '"members":[["2401.00001","A title",{"federated":1.0}]]}'
    )
    old = LikeProfile.from_json(stored, 0.2)
    assert old.topics == {} and old.threshold == 0.2
    vector, tags = paper_vector(paper), tags_of(paper)
    assert old.score(vector, tags) == old.score(vector) == pytest.approx(dot(vector, old.centroid))
    assert "shares" not in old.why(vector, tags)
    index = LikeIndex({"l:old": old})
    assert (index.tag(paper, vector, tags) != {}) == (old.score(vector) > 0.2)
    text_only = build_profile([paper]).to_json()
    assert '"topics"' not in text_only  # a text-only profile is stored as before


def test_why_names_the_shared_topics_weightiest_first_and_json_keeps_them() -> None:
    fl = positives("federated-learning")
    profile = calibrated_profile(fl[:10], [], catalog())
    again = LikeProfile.from_json(profile.to_json(), profile.threshold)
    assert again.topics == profile.topics and again.names == profile.names
    paper = next(p for p in fl[10:] if "federated-learning" in tags_of(p))
    why = again.why(paper_vector(paper), tags_of(paper))
    assert why.startswith("most like ") and "; shares the topics Federated Learning" in why
    shared = again.shared(tags_of(paper))
    assert shared[0] == "Federated Learning" and len(shared) <= 3
    weights = [again.topics[t] for n in shared for t, m in again.names.items() if m == n]
    assert weights == sorted(weights, reverse=True)
    assert again.why(paper_vector(paper)) == profile.why(paper_vector(paper))
    assert "shares" not in again.why(paper_vector(paper))
    # a paper hardly like any member (it matched by its topics) names no member
    member = again.members[0]
    assert again.explain(member, 0.001, tags_of(paper)) == (
        "shares the topics " + ", ".join(again.shared(tags_of(paper)))
    )
    assert again.explain(member, 0.0).startswith("like the set as a whole")
