"""The catalog topics' second stage (bot/topics/second_stage.py) and its training
(bench/relevance_stage.py, scripts/train_second_stage.py), on the real labelled dev papers."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from bench.fixtures import ROOT
from bench.relevance_catalog import Labelled, labelled_topics, load_split, rule_tagger
from bench.relevance_stage import (
    TERMS_FEATURE,
    TITLE_FEATURE,
    Example,
    choose,
    deal,
    decide,
    examples,
    fit,
    labels_sha256,
)
from bot.services.ingest import rule_tags
from bot.topics import tag_rules
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.second_stage import (
    RULE_FEATURE,
    STAGE_FILE,
    SecondStage,
    TopicStage,
    bundled_stage,
)
from tests.support.second_stage import (
    OFF_TOPIC,
    ON_TOPIC,
    TOPIC,
    stage_model,
    stage_rows,
    text_vector,
    trained_stage,
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_the_two_papers_are_what_the_labels_say() -> None:
    labels = {
        lb.arxiv_id: lb.label
        for t in labelled_topics("dev")[0]
        if t.slug == TOPIC
        for lb in t.labels
    }
    assert labels[OFF_TOPIC] is False and labels[ON_TOPIC] is True
    rows = {r.arxiv_id: r for r in stage_rows()}
    assert rows[OFF_TOPIC].rule and rows[ON_TOPIC].rule  # both are rule matches


def test_the_stage_drops_an_off_topic_rule_match_and_keeps_an_on_topic_one(
    catalog: Catalog,
) -> None:
    papers = load_split("dev")
    plain = rule_tagger(catalog, stage=SecondStage({}))
    staged = rule_tagger(catalog, stage=trained_stage())
    off, on = papers[OFF_TOPIC], papers[ON_TOPIC]
    assert TOPIC in plain.tag(off) and TOPIC in plain.tag(on)
    assert TOPIC not in staged.tag(off)
    kept = staged.tag(on)[TOPIC]
    assert kept[:-1] == plain.tag(on)[TOPIC]  # the rule's words, then the stage's verdict
    assert kept[-1].startswith("stage ") and "≥" in kept[-1] and "for: " in kept[-1]
    # Other topics are untouched, and brute force agrees with the index.
    assert {k: v for k, v in staged.tag(off).items()} == {
        k: v for k, v in plain.tag(off).items() if k != TOPIC
    }
    assert staged.tag(off) == staged.brute_force(off) and staged.tag(on) == staged.brute_force(on)


def test_a_decision_explains_itself() -> None:
    decision = trained_stage().decide(TOPIC, text_vector(OFF_TOPIC))
    assert decision is not None and not decision.kept
    words = decision.words()
    assert words.startswith(f"stage {decision.score:.2f} < {decision.threshold:.2f} (")
    vector = text_vector(OFF_TOPIC) | {RULE_FEATURE: 1.0}
    assert decision.up and all(c.amount > 0 and c.feature in vector for c in decision.up)
    assert all(c.amount < 0 and c.feature in vector for c in decision.down)
    assert ("against: " in words) == bool(decision.down)
    assert trained_stage().decide("computer-vision", text_vector(OFF_TOPIC)) is None


def test_ingest_and_the_bench_tag_alike_with_the_stage(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tag_rules, "bundled_stage", trained_stage)
    papers = list(load_split("dev").values())[:300] + [
        load_split("dev")[i] for i in (OFF_TOPIC, ON_TOPIC)
    ]
    ingest: dict[str, dict[str, tuple[str, ...]]] = {p.arxiv_id: {} for p in papers}
    for arxiv_id, key, why in rule_tags(catalog, [], papers):
        ingest[arxiv_id][key] = why
    bench = rule_tagger(catalog)
    assert ingest == {p.arxiv_id: bench.tag(p) for p in papers}
    assert TOPIC not in ingest[OFF_TOPIC] and TOPIC in ingest[ON_TOPIC]


def test_choosing_and_fitting_are_deterministic() -> None:
    rows = list(stage_rows())
    first, second = fit(rows, 10.0), fit(rows, 10.0)
    assert first is not None and second is not None
    assert first.to_json() == second.to_json()
    assert choose(_topic(), rows) == choose(_topic(), rows)


def _topic() -> Labelled:
    return next(t for t in labelled_topics("dev")[0] if t.slug == TOPIC)


def test_folds_are_whole_days_dealt_in_date_order() -> None:
    days = ["2025-08-02", "2025-08-01", "2025-08-03", "2025-08-01"]
    assert deal(days, 2) == {"2025-08-01": 0, "2025-08-02": 1, "2025-08-03": 0}
    rows = stage_rows()
    outer = deal((r.day for r in rows), 5)
    assert {r.day for r in rows if outer[r.day] == 0}.isdisjoint(
        {r.day for r in rows if outer[r.day] != 0}
    )


def test_decide_filters_rule_matches_and_accepts_candidates_only_above_accept() -> None:
    row = Example("x", True, True, "d", {})
    assert decide(row, 0.1, None) and decide(row, 0.1, 0.0) and not decide(row, -0.1, 0.0)
    outside = Example("y", True, False, "d", {}, candidate=True)
    assert not decide(outside, 5.0, None) and not decide(outside, 5.0, None, None)
    assert decide(outside, 1.0, None, 0.5) and not decide(outside, 0.4, None, 0.5)
    assert not decide(Example("z", True, False, "d", {}), 9.0, None, 0.0)


def test_no_model_from_papers_that_share_no_feature() -> None:
    """A fold of a few papers whose words all differ leaves nothing to learn from: no model
    (the rule decides there), not an error that stops the training of every topic."""
    rows = [
        Example("2601.00001", True, True, "2026-01-01", {"alpha": 1.0}),
        Example("2601.00002", False, True, "2026-01-01", {"beta": 1.0}),
    ]
    assert fit(rows, 1.0) is None
    shared = [replace(r, vector={**r.vector, "gamma": 1.0}) for r in rows]
    assert fit(shared, 1.0) is not None


def test_the_shipped_file_loads_fits_the_catalog_and_the_labels(catalog: Catalog) -> None:
    shipped = (ROOT / "bot" / "topics" / STAGE_FILE).read_text("utf-8")
    data = json.loads(shipped)
    stage = bundled_stage()
    assert stage.slugs == set(data["topics"])
    assert all(catalog.by_slug(slug) for slug in stage.slugs)
    labelled = {t.slug for t in labelled_topics("dev")[0]}
    assert set(data["cv"]) == labelled  # a cross-validated figure for every labelled topic
    assert stage.slugs <= {s for s, cv in data["cv"].items() if cv["shipped"]}
    # Trained from the labels now in the repository (retrain after a label changes).
    assert data["trained_from"]["labels_sha256"] == labels_sha256()
    for cv in data["cv"].values():
        assert cv["shipped"] == (
            cv["gain"] >= data["trained_from"]["min_gain"]
            and (cv["threshold"] is not None or cv["accept"] is not None)
        )


def test_the_rule_features_experiment_says_where_the_rule_matched() -> None:
    topic = _topic()
    rows = {r.arxiv_id: r for r in examples([topic], load_catalog(), rule_features=True)[TOPIC]}
    on = rows[ON_TOPIC].vector  # "hallucination" is in its title
    assert on[TITLE_FEATURE] == 1.0 and 0 < on[TERMS_FEATURE] <= 1.0
    off = rows[OFF_TOPIC].vector  # the word only in the abstract
    assert off[TITLE_FEATURE] == 0.0 and off[RULE_FEATURE] == 1.0
    assert all(r.vector[TERMS_FEATURE] == 0.0 for r in rows.values() if not r.rule)


def test_the_fast_score_is_the_decisions_score() -> None:
    stage = trained_stage()
    for arxiv_id in (OFF_TOPIC, ON_TOPIC):
        decision = stage.decide(TOPIC, text_vector(arxiv_id))
        assert decision is not None
        fast = TopicStage(TOPIC, stage_model(), decision.threshold).score(text_vector(arxiv_id))
        assert fast == pytest.approx(decision.score, abs=1e-12)
