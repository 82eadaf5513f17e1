"""Guards on the bundled catalog and on how well it tags papers.

The figures come from bench/relevance.py (run it to see them); the floors below
are the measured values minus a small margin, so a rule edit that makes the
flagship topic or the seed tags clearly worse fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import relevance
from bot.topics.catalog import load_catalog
from bot.topics.query import parse_query
from bot.topics.query_tree import CATALOG_LIMITS, QueryError
from bot.topics.resolve import resolve_topic

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "tests" / "fixtures" / "seed" / "topic_page.json"
DEVSET = ROOT / "tests" / "fixtures" / "relevance" / "devset.jsonl"
HOLDOUT = ROOT / "tests" / "fixtures" / "relevance" / "holdout.jsonl"

# Measured with bench/relevance.py on the committed catalog and dev set:
# dev precision 0.846, recall 0.957; seed recall 1.000; seed other tags (micro)
# precision 0.410, recall 0.851, F1 0.553.
# The seed page shows 3-6 curated tags a paper and keeps no room for more; the catalog's
# rules now follow the written definitions of the labelled evaluation
# (tests/fixtures/relevance/catalog/), by which most seed papers are also, say, RL
# post-training and agentic RL. So precision against the page fell (0.62 -> 0.41) while
# the page's own tags are found as before: the floor that matters is recall.
# On 2026-12-02 (F1 0.501 -> 0.499) "RL for Language Model Reasoning" was rewritten on its
# labels, which count RL-trained LLM agents (search, memory) as reasoning RL: five seed
# papers gained it and the page, which files them under its flagship, shows it on one.
# The F1 floor keeps room for such definition-led extras; recall stays the guard.
MIN_DEV_PRECISION = 0.80
MIN_DEV_RECALL = 0.92
MIN_SEED_RECALL = 0.95
MIN_SEED_TAG_RECALL = 0.80
MIN_SEED_TAG_F1 = 0.45

# The held-out set (never used to tune the rule; see tests/fixtures/relevance/README.md),
# measured on the committed catalog: 326 papers, 1 positive; the flagship finds it
# (tp=1) with 5 false positives: precision 0.167, recall 1.000, F1 0.286, false-positive
# rate 0.0154. With a single positive these floors allow one more false positive and
# no missed positive.
MIN_HOLDOUT_PRECISION = 0.14
MIN_HOLDOUT_RECALL = 0.95
MIN_HOLDOUT_F1 = 0.25
MAX_HOLDOUT_FALSE_POSITIVE_RATE = 0.025


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def figures(catalog):
    return relevance.measure(catalog)


# --- the catalog itself ---------------------------------------------------------------


def test_catalog_is_large_enough(catalog):
    assert len(catalog.topics) >= 120


def test_every_seed_tag_is_a_topic_with_that_exact_name(catalog):
    page = json.loads(SEED.read_text(encoding="utf-8"))
    seed_tags = {tag for paper in page["papers"] for tag in paper["tags"]}
    assert len(seed_tags) == 68
    names = {topic.name for topic in catalog.topics}
    assert seed_tags - names == set()


def test_slugs_are_unique_and_parents_exist_without_cycles(catalog):
    slugs = [topic.slug for topic in catalog.topics]
    assert len(slugs) == len(set(slugs))
    names = [topic.name for topic in catalog.topics]
    assert len(names) == len(set(names))
    by_slug = {topic.slug: topic for topic in catalog.topics}
    for topic in catalog.topics:
        seen = {topic.slug}
        parent = topic.parent
        while parent is not None:
            assert parent in by_slug, f"{topic.name}: unknown parent {parent!r}"
            assert parent not in seen, f"{topic.name}: parent cycle"
            seen.add(parent)
            parent = by_slug[parent].parent


def test_most_topics_are_organised_under_a_parent(catalog):
    with_parent = sum(topic.parent is not None for topic in catalog.topics)
    assert with_parent >= len(catalog.topics) * 0.7


def test_every_rule_parses_within_limits(catalog):
    problems = []
    for topic in catalog.topics:
        if not topic.rule or not topic.description:
            problems.append(f"{topic.name}: missing rule or description")
            continue
        if len(topic.rule) > CATALOG_LIMITS.chars:
            problems.append(f"{topic.name}: rule longer than {CATALOG_LIMITS.chars} characters")
        try:
            parse_query(topic.rule, CATALOG_LIMITS)  # also refuses too many terms
        except QueryError as exc:
            problems.append(f"{topic.name}: {exc}")
    assert problems == []


def test_every_name_slug_and_alias_resolves_to_its_own_topic(catalog):
    wrong = []
    for topic in catalog.topics:
        for text in (topic.name, topic.slug, *topic.aliases):
            found = resolve_topic(text, catalog).topic
            if found is None or found.slug != topic.slug:
                wrong.append(f"{text!r} -> {found.slug if found else None}, not {topic.slug}")
    assert wrong == []


def test_glossary_knows_the_usual_abbreviations(catalog):
    for abbreviation in ("RL", "LLM", "RAG", "VLM", "QA", "RLHF", "RLVR", "GRPO", "PPO", "DPO"):
        assert abbreviation in catalog.glossary
    assert catalog.glossary["RL"] == "Reinforcement Learning"


# --- the development set --------------------------------------------------------------


def test_devset_is_well_formed():
    rows = [json.loads(line) for line in DEVSET.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) >= 320
    ids = [row["arxiv_id"] for row in rows]
    assert len(ids) == len(set(ids))
    for row in rows:
        for field in ("arxiv_id", "title", "abstract", "authors", "categories", "date", "labels"):
            assert field in row, f"{row.get('arxiv_id')}: no {field}"
        assert isinstance(row["labels"]["rl-for-llm-agents"], bool)
        assert isinstance(row["authors"], list)
        assert row["categories"]
    positives = sum(row["labels"]["rl-for-llm-agents"] for row in rows)
    assert 60 <= positives <= len(rows) - 200  # plenty of positives and of hard negatives


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _title_key(title: str) -> str:
    return re.sub(r"\W+", " ", title.lower()).strip()


def test_holdout_is_well_formed_and_disjoint_from_devset_and_seed_page():
    rows = _rows(HOLDOUT)
    assert len(rows) >= 200
    ids = [row["arxiv_id"] for row in rows]
    assert len(ids) == len(set(ids))
    assert set(ids).isdisjoint(row["arxiv_id"] for row in _rows(DEVSET))
    page = json.loads(SEED.read_text(encoding="utf-8"))
    seed_titles = {_title_key(paper["title"]) for paper in page["papers"]}
    assert not seed_titles & {_title_key(row["title"]) for row in rows}
    for row in rows:
        for field in (
            "arxiv_id",
            "title",
            "abstract",
            "authors",
            "categories",
            "date",
            "labels",
            "note",
        ):
            assert field in row, f"{row.get('arxiv_id')}: no {field}"
        assert isinstance(row["labels"]["rl-for-llm-agents"], bool)
        assert isinstance(row["authors"], list)
        assert row["categories"]
        assert row["note"]
    assert sum(row["labels"]["rl-for-llm-agents"] for row in rows) >= 1


# --- the figures ----------------------------------------------------------------------


def test_flagship_recall_on_the_curated_seed_page(figures):
    assert figures["seed_papers"] == 30
    assert figures["seed_flagship_recall"] >= MIN_SEED_RECALL


def test_other_seed_tags_micro_f1(figures):
    assert figures["seed_other_tags"]["recall"] >= MIN_SEED_TAG_RECALL
    assert figures["seed_other_tags"]["f1"] >= MIN_SEED_TAG_F1


def test_flagship_on_the_development_set(figures):
    dev = figures["flagship_dev"]
    assert dev["precision"] >= MIN_DEV_PRECISION
    assert dev["recall"] >= MIN_DEV_RECALL


def test_flagship_beats_following_a_single_category(figures):
    assert set(figures["baseline_dev"]) == {"cs.AI", "cs.LG", "cs.CL", "cs.MA"}
    best = max(s["f1"] for s in figures["baseline_dev"].values())
    assert figures["baseline_best_dev"]["f1"] == best
    assert figures["flagship_dev"]["f1"] > best


def test_flagship_on_the_held_out_set(figures):
    held_out = figures["holdout"]
    assert held_out is not None, "tests/fixtures/relevance/holdout.jsonl is missing"
    assert held_out["size"] >= 200
    flagship = held_out["flagship"]
    assert flagship["precision"] >= MIN_HOLDOUT_PRECISION
    assert flagship["recall"] >= MIN_HOLDOUT_RECALL
    assert flagship["f1"] >= MIN_HOLDOUT_F1
    assert flagship["false_positive_rate"] <= MAX_HOLDOUT_FALSE_POSITIVE_RATE


def test_flagship_beats_following_a_single_category_on_the_held_out_set(figures):
    held_out = figures["holdout"]
    assert set(held_out["baseline"]) == {"cs.AI", "cs.LG", "cs.CL", "cs.MA"}
    best = max(s["f1"] for s in held_out["baseline"].values())
    assert held_out["baseline_best"]["f1"] == best
    assert held_out["flagship"]["f1"] > best
