"""The first relevance figures: the flagship topic on its labelled sets, and the seed tags.

1. precision, recall and F1 of "RL for LLM Agents" on the hand-labelled development
   set (tests/fixtures/relevance/devset.jsonl, see the README beside it);
2. the same for the baseline peers use, following one arXiv category
   (a paper "matches" when the category is anywhere in its list), for cs.AI, cs.LG,
   cs.CL and cs.MA, and the best of the four by F1;
3. recall of the flagship on the 30 papers of the curated topic page
   (tests/fixtures/seed/topic_page.json, all curated "RL for LLM Agents");
4. micro-averaged precision, recall and F1 of the other curated tags on those 30
   papers: for each paper, our tags restricted to the tags that occur on the page
   (minus the flagship) against the tags the page shows;
5. precision, recall and F1 of the flagship and of the one-category baselines on the
   held-out set (tests/fixtures/relevance/holdout.jsonl): papers that were labelled
   before the rule was run on them and were never used to tune it. -v lists dev-set
   errors only, never held-out ones, so that nobody tunes the rule on them by accident.

`measure()` returns these figures as a dict; bench/relevance.py prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bench.fixtures import DEVSET, FIXTURES, json_records
from bot.domain import Author, Paper
from bot.services.ingest import paper_from_json
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.tag_rules import catalog_tagger
from bot.topics.tagger import Tagger

FLAGSHIP = "rl-for-llm-agents"
BASELINE_CATEGORIES = ("cs.AI", "cs.LG", "cs.CL", "cs.MA")
SEED = FIXTURES / "seed" / "topic_page.json"
HOLDOUT = FIXTURES / "relevance" / "holdout.jsonl"


@dataclass(frozen=True)
class Scores:
    """True positives, false positives and false negatives: counts, or sums of weights."""

    tp: float
    fp: float
    fn: float

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "tp": round(self.tp, 2),
            "fp": round(self.fp, 2),
            "fn": round(self.fn, 2),
        }


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion; (0, 1) when there are no trials."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * ((p * (1 - p) / trials + z * z / (4 * trials * trials)) ** 0.5) / denominator
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def score(pairs: Iterable[tuple[bool, bool]]) -> Scores:
    """Scores from (predicted, gold) pairs."""
    tp = fp = fn = 0
    for predicted, gold in pairs:
        tp += predicted and gold
        fp += predicted and not gold
        fn += gold and not predicted
    return Scores(tp, fp, fn)


@dataclass(frozen=True)
class Labelled:
    paper: Paper
    label: bool
    note: str


def load_devset(path: Path = DEVSET) -> list[Labelled]:
    """A hand-labelled JSONL set (the development set, or the held-out set)."""
    return [
        Labelled(paper_from_json(row), bool(row["labels"][FLAGSHIP]), row.get("note", ""))
        for row in json_records(path)
    ]


def load_seed_page(path: Path = SEED) -> list[tuple[Paper, frozenset[str], int]]:
    """The curated topic page: (paper, the tag names it shows, how many more it hides
    behind "+N") for each of its papers."""
    page = json.loads(path.read_text(encoding="utf-8"))
    return [
        (
            Paper(
                arxiv_id=f"sample:seed-{i}",
                title=entry["title"],
                abstract=entry["abstract"],
                authors=tuple(Author(name) for name in entry.get("authors_shown", [])),
                categories=(entry["primary_category"],),
            ),
            frozenset(entry["tags"]),
            int(entry.get("tags_more", 0)),
        )
        for i, entry in enumerate(page["papers"])
    ]


def _holdout_figures(tagger: Tagger, path: Path) -> dict[str, object]:
    """Aggregate figures on the held-out set; deliberately no per-paper output."""
    rows = load_devset(path)
    labels = [row.label for row in rows]
    positives, negatives = sum(labels), len(rows) - sum(labels)
    hits = [FLAGSHIP in tagger.tag(row.paper) for row in rows]
    flagship = score(zip(hits, labels, strict=True))
    baseline = {
        cat: score((cat in row.paper.categories, row.label) for row in rows)
        for cat in BASELINE_CATEGORIES
    }
    best_cat = max(BASELINE_CATEGORIES, key=lambda cat: baseline[cat].f1)
    return {
        "size": len(rows),
        "positives": positives,
        "flagship": flagship.as_dict()
        | {
            "precision_ci95": wilson(flagship.tp, flagship.tp + flagship.fp),
            "recall_ci95": wilson(flagship.tp, positives),
            "false_positive_rate": round(flagship.fp / negatives, 4) if negatives else 0.0,
        },
        "baseline": {cat: s.as_dict() for cat, s in baseline.items()},
        "baseline_best_category": best_cat,
        "baseline_best": baseline[best_cat].as_dict(),
    }


def measure(
    catalog: Catalog | None = None,
    devset: Path = DEVSET,
    seed: Path = SEED,
    verbose: bool = False,
    holdout: Path | None = HOLDOUT,
) -> dict[str, object]:
    catalog = catalog or load_catalog()
    tagger = catalog_tagger(catalog)  # what ingest tags with (rules, then the second stage)
    flagship = catalog.by_slug(FLAGSHIP)
    if flagship is None:
        raise SystemExit(f"the catalog has no topic {FLAGSHIP!r}")
    names = {topic.slug: topic.name for topic in catalog.topics}

    # 1. the flagship on the development set
    dev = load_devset(devset)
    hits = [FLAGSHIP in tagger.tag(row.paper) for row in dev]
    dev_scores = score(zip(hits, (row.label for row in dev), strict=True))
    if verbose:
        for row, hit in zip(dev, hits, strict=True):
            if hit != row.label:
                kind = "FP" if hit else "FN"
                print(f"  {kind} {row.paper.arxiv_id} {row.paper.title[:70]} | {row.note}")

    # 2. the one-category baseline on the same papers
    baseline = {
        cat: score((cat in row.paper.categories, row.label) for row in dev)
        for cat in BASELINE_CATEGORIES
    }
    best_cat = max(BASELINE_CATEGORIES, key=lambda cat: baseline[cat].f1)

    # 3. and 4. the curated topic page
    pages = load_seed_page(seed)
    vocabulary = frozenset().union(*(tags for _, tags, _ in pages)) - {flagship.name}
    flagship_hits = 0
    tp = fp = fn = 0
    for paper, shown, _ in pages:
        predicted = {names[key] for key in tagger.tag(paper)}
        flagship_hits += flagship.name in predicted
        ours, theirs = predicted & vocabulary, shown & vocabulary
        tp, fp, fn = tp + len(ours & theirs), fp + len(ours - theirs), fn + len(theirs - ours)
        if verbose:
            print(f"  seed: {paper.title[:60]}\n    extra {sorted(ours - theirs)}")
            print(f"    missed {sorted(theirs - ours)}")
    seed_tags = Scores(tp, fp, fn)

    # 5. the held-out set, aggregate figures only
    held_out = _holdout_figures(tagger, holdout) if holdout and holdout.exists() else None

    return {
        "catalog_topics": len(catalog.topics),
        "devset_size": len(dev),
        "devset_positives": sum(row.label for row in dev),
        "flagship_dev": dev_scores.as_dict(),
        "baseline_dev": {cat: s.as_dict() for cat, s in baseline.items()},
        "baseline_best_category": best_cat,
        "baseline_best_dev": baseline[best_cat].as_dict(),
        "seed_papers": len(pages),
        "seed_flagship_recall": round(flagship_hits / len(pages), 4),
        "seed_other_tags": seed_tags.as_dict(),
        "seed_other_tag_vocabulary": len(vocabulary),
        "holdout": held_out,
    }
