"""The labelled catalog evaluation: pools, labels, and weighted figures per topic.

The data is in tests/fixtures/relevance/catalog/ (its README says how it was made):
`<split>.jsonl.gz` holds a split's papers, `pools/<split>/<slug>.json` how the papers
read for a topic were sampled, and `labels/<split>/<slug>.jsonl` one label per paper read.

A pool divides the split into three strata, fixed when the pool was made: R (the papers
the topic's rule tagged then), S (the others its screen matches) and C (the rest). A pool
that was widened later may have S divided in two: F ("focus", the papers of S that the
topic's narrower focus expression matches, read densely) and the rest of S ("screen").
Each labelled paper of R, F or S stands for `size / read` papers of its stratum, so the
weighted counts are a Horvitz-Thompson estimate of the true and false positives and
negatives over R and S of the whole split, for whatever rule is measured now: the weights
come from how the papers were sampled, never from the rule. The controls (the papers read
from C) are reported on their own: a positive there is one the screen missed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from bench.fixtures import FIXTURES, json_records, read_paper_file
from bench.relevance_flagship import Scores
from bot.domain import Paper
from bot.topics.catalog import Catalog
from bot.topics.second_stage import SecondStage
from bot.topics.tag_rules import catalog_tagger
from bot.topics.tagger import Tagger

CATALOG_DIR = FIXTURES / "relevance" / "catalog"
SPLITS = ("dev", "holdout")
ESTIMATED = ("rule", "focus", "screen")  # R, F (optional) and S; "control" is C
#: The strata a pool may have: as drawn, or with S divided into F and the rest of S.
STRATA_SETS = ({"rule", "screen", "control"}, {"rule", "focus", "screen", "control"})


class LabelError(ValueError):
    """A label or pool file is malformed or does not match its pool; names the file."""


@dataclass(frozen=True)
class Stratum:
    size: int
    read: frozenset[str]

    @property
    def weight(self) -> float:
        """How many papers of the stratum each paper read stands for."""
        return self.size / len(self.read) if self.read else 0.0


@dataclass(frozen=True)
class Pool:
    slug: str
    split: str
    strata: Mapping[str, Stratum]  # "rule" (R), "screen" (S), "control" (C)

    def stratum_of(self, arxiv_id: str) -> str | None:
        return next((name for name, s in self.strata.items() if arxiv_id in s.read), None)

    @property
    def read(self) -> frozenset[str]:
        return frozenset().union(*(s.read for s in self.strata.values()))


@dataclass(frozen=True)
class Label:
    arxiv_id: str
    label: bool
    note: str


def load_pool(path: Path) -> Pool:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        strata = {
            name: Stratum(int(s["size"]), frozenset(s["read"])) for name, s in raw["strata"].items()
        }
        return Pool(raw["slug"], raw["split"], strata)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LabelError(f"{path}: not a pool file ({exc})") from exc


def load_labels(path: Path) -> list[Label]:
    """One `{"arxiv_id", "label": bool, "note"}` object per line; blank lines are skipped."""
    labels = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise LabelError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("arxiv_id"), str):
            raise LabelError(f"{path}:{number}: no arxiv_id")
        if not isinstance(row.get("label"), bool):
            raise LabelError(f"{path}:{number}: label is not true or false")
        labels.append(Label(row["arxiv_id"], row["label"], str(row.get("note", ""))))
    return labels


def consistency_problems(pool: Pool, labels: list[Label]) -> list[str]:
    """Why the labels do not fit their pool: every paper read gets exactly one label."""
    ids = [label.arxiv_id for label in labels]
    problems = []
    if len(ids) != len(set(ids)):
        problems.append(f"{len(ids) - len(set(ids))} papers labelled twice")
    if missing := pool.read - set(ids):
        problems.append(f"{len(missing)} papers read but not labelled, e.g. {min(missing)}")
    if extra := set(ids) - pool.read:
        problems.append(f"{len(extra)} labelled papers not in the pool, e.g. {min(extra)}")
    for name, stratum in pool.strata.items():
        if len(stratum.read) > stratum.size:
            problems.append(f"stratum {name}: more papers read than it holds")
    if sum(len(s.read) for s in pool.strata.values()) != len(pool.read):
        problems.append("a paper is read in two strata")
    if set(pool.strata) not in STRATA_SETS:
        problems.append(f"strata {sorted(pool.strata)}, not rule, (focus,) screen and control")
    return problems


@dataclass(frozen=True)
class Labelled:
    """One topic on one split: its pool and its labels, checked against each other."""

    slug: str
    split: str
    pool: Pool
    labels: tuple[Label, ...]


#: The two parts of the dev split a tuner may use to see whether a change generalises: the
#: errors of "tune" days are looked at, "check" days only give figures (bench/relevance.py
#: --fold). Every third announcement day, by date, is a check day.
FOLDS = ("tune", "check")


@cache
def dev_folds(root: Path = CATALOG_DIR) -> dict[str, str]:
    """arXiv id -> "tune" or "check" for every dev paper, by its announcement day."""
    dates = {row["arxiv_id"]: row["date"] for row in json_records(root / "dev.jsonl.gz")}
    days = sorted(set(dates.values()))
    fold = {day: FOLDS[index % 3 == 2] for index, day in enumerate(days)}
    return {arxiv_id: fold[day] for arxiv_id, day in dates.items()}


def labelled_topics(
    split: str, root: Path = CATALOG_DIR, fold: str | None = None
) -> tuple[list[Labelled], list[str]]:
    """Every topic with a label file on `split`, and the problems of those that cannot count;
    with `fold` (dev only), each topic keeps the labels of that fold's days alone: the
    weights stay those of the pool, so the figures estimate that fold's papers."""
    if fold is not None and (split != "dev" or fold not in FOLDS):
        raise ValueError(f"fold {fold!r} of {split!r}: folds are {FOLDS} of dev")
    found, problems = [], []
    for path in sorted((root / "labels" / split).glob("*.jsonl")):
        slug = path.stem
        try:
            pool = load_pool(root / "pools" / split / f"{slug}.json")
            labels = load_labels(path)
        except LabelError as exc:
            problems.append(f"{slug} ({split}): {exc}")
            continue
        if wrong := consistency_problems(pool, labels):
            problems.append(f"{slug} ({split}): " + "; ".join(wrong))
            continue
        found.append(Labelled(slug, split, pool, tuple(labels)))
    if fold is not None:
        folds = dev_folds(root)
        found = [
            replace(t, labels=tuple(lb for lb in t.labels if folds.get(lb.arxiv_id) == fold))
            for t in found
        ]
    return found, problems


def load_split(split: str, root: Path = CATALOG_DIR) -> dict[str, Paper]:
    """The split's papers by arXiv id."""
    return {paper.arxiv_id: paper for paper in read_paper_file(root / f"{split}.jsonl.gz")}


def rule_tagger(
    catalog: Catalog, slugs: Iterable[str] | None = None, stage: SecondStage | None = None
) -> Tagger:
    """The tagger the bot uses for the catalog (`catalog_tagger`: rules and the shipped
    second stage, or `stage`), limited to `slugs` when given."""
    return catalog_tagger(catalog, slugs, stage=stage)


def evaluate(topic: Labelled, hits: Mapping[str, bool]) -> dict[str, object]:
    """Figures of one topic on one split; `hits[id]` says whether the rule tags paper `id`.

    weighted: R and S papers weighted by stratum size / papers read (see the module
    docstring); plain: unweighted counts over every labelled paper, controls included;
    controls: the C papers read, how many are positive and how many the rule tags.
    """
    weighted = [0.0, 0.0, 0.0]  # tp, fp, fn
    plain = [0, 0, 0]
    positives = estimated_positives = 0.0
    controls = {"read": 0, "positive": 0, "tagged": 0, "tagged_positive": 0}
    for label in topic.labels:
        stratum = topic.pool.stratum_of(label.arxiv_id)
        hit = bool(hits[label.arxiv_id])
        outcome = _outcome(hit, label.label)
        positives += label.label
        if outcome is not None:
            plain[outcome] += 1
        if stratum in ESTIMATED:
            weight = topic.pool.strata[stratum].weight
            estimated_positives += weight * label.label
            if outcome is not None:
                weighted[outcome] += weight
        elif stratum == "control":
            controls["read"] += 1
            controls["positive"] += label.label
            controls["tagged"] += hit
            controls["tagged_positive"] += hit and label.label
    return {
        "weighted": Scores(*weighted).as_dict(),
        "plain": Scores(*plain).as_dict(),
        "papers_read": len(topic.labels),
        "positives_read": int(positives),
        "estimated_positives": round(estimated_positives, 1),
        "controls": controls,
        "strata": {name: s.size for name, s in topic.pool.strata.items()},
    }


def f1_interval(
    topic: Labelled, hits: Mapping[str, bool], rounds: int = 400
) -> tuple[float, float]:
    """A 95% interval of the weighted F1 by a stratified bootstrap: each round redraws, with
    replacement, as many papers as were read from each of R, F and S, keeps the weights, and
    recomputes F1; the interval is the 2.5th and 97.5th percentiles. Seeded by the topic
    and split, so the same labels always give the same interval."""
    drawn = {name: [] for name in ESTIMATED if name in topic.pool.strata}
    for label in topic.labels:
        stratum = topic.pool.stratum_of(label.arxiv_id)
        if stratum in drawn:
            drawn[stratum].append(_outcome(bool(hits[label.arxiv_id]), label.label))
    rng = random.Random(f"{topic.slug}/{topic.split}/bootstrap")
    scores = []
    for _ in range(rounds):
        counts = [0.0, 0.0, 0.0]
        for name, outcomes in drawn.items():
            weight = topic.pool.strata[name].weight
            for outcome in rng.choices(outcomes, k=len(outcomes)) if outcomes else ():
                if outcome is not None:
                    counts[outcome] += weight
        scores.append(Scores(*counts).f1)
    scores.sort()
    return round(scores[int(0.025 * rounds)], 3), round(scores[int(0.975 * rounds) - 1], 3)


def _outcome(hit: bool, gold: bool) -> int | None:
    """Index into (tp, fp, fn), or None for a true negative."""
    if hit:
        return 0 if gold else 1
    return 2 if gold else None


def errors(topic: Labelled, tags: Mapping[str, Mapping[str, tuple[str, ...]]]) -> dict:
    """The labelled papers the rule gets wrong: false positives with the words that
    matched (what `/why` shows), and false negatives; `tags[id]` is the paper's tags."""
    fp, fn = [], []
    for label in topic.labels:
        why = tags[label.arxiv_id].get(topic.slug)
        if why is not None and not label.label:
            fp.append((label, why))
        elif why is None and label.label:
            fn.append((label, ()))
    return {"false_positives": fp, "false_negatives": fn}


def macro_f1(figures: Mapping[str, Mapping]) -> float | None:
    """Mean weighted F1 over the topics that have at least one positive read."""
    scores = [f["weighted"]["f1"] for f in figures.values() if f["positives_read"]]
    return round(sum(scores) / len(scores), 4) if scores else None


def worst(figures: Mapping[str, Mapping], n: int = 5) -> list[str]:
    """The `n` topics with the lowest weighted F1 (among those with a positive read)."""
    ranked = sorted(
        (f["weighted"]["f1"], slug) for slug, f in figures.items() if f["positives_read"]
    )
    return [slug for _, slug in ranked[:n]]
