"""Training the topics' second stage (`bot.topics.second_stage`) and measuring it honestly.

The stage is trained on the dev labels of tests/fixtures/relevance/catalog/ (never the
held-out split), so its dev figures say nothing: a model scores well on the papers it was
fitted to. Its worth is measured by **cross-validation over announcement days**: the dev days
are dealt, in date order, into `FOLDS` folds; for each fold a model is trained on the labels
of the other days and decides that fold's papers, and the out-of-fold decisions of every
labelled paper are scored like the rule (weighted by the pools, `bench.relevance_catalog`).
Rule alone and rule + stage are compared on exactly the same papers. The rule itself was
tuned on dev, so the rule's figure here is the in-sample one of the committed figures:
the comparison measures what the stage adds on days it did not see.

Per topic (see `train_topic`):

- examples: every labelled dev paper of the topic (R, S and controls), described by
  `paper_vector` plus `RULE_FEATURE` (1 when the topic's rule matches it); fitted with
  `fit_linear` (class-balanced L2 logistic regression), then pruned to its `KEEP_WEIGHTS`
  largest weights exactly as shipped;
- the stage only filters: a paper is tagged when the rule matches it and its score reaches
  the threshold;
- the regularisation (`STRENGTHS`) and threshold (`THRESHOLDS`; None keeps every rule match)
  are chosen by an inner cross-validation over the training days only (`INNER_FOLDS` folds),
  the one with the best weighted F1, the lowest threshold and strength on ties;
- shipped when the outer cross-validation's weighted F1 beats the rule's by `MIN_GAIN`
  and the chosen threshold filters at all.

Everything is deterministic: folds by date, seeded nothing, L-BFGS, rounded weights.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.fixtures import json_records
from bench.relevance_catalog import (
    CATALOG_DIR,
    Labelled,
    evaluate,
    labelled_topics,
    load_split,
    rule_tagger,
)
from bot.domain import Paper
from bot.topics.catalog import Catalog
from bot.topics.document import Document
from bot.topics.second_stage import RULE_FEATURE, SecondStage
from bot.topics.text_model import LinearModel, Vector, fit_linear, paper_vector

FOLDS = 5
INNER_FOLDS = 3
STRENGTHS = (10.0, 30.0, 100.0)
THRESHOLDS: tuple[float | None, ...] = (None, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
KEEP_WEIGHTS = 400
#: A feature is learned from only when at least this many training papers have it.
MIN_PAPERS = 2
#: Scores a candidate outside the rule must reach to be tagged (None: never).
ACCEPTS: tuple[float | None, ...] = (None, 0.0, 0.5, 1.0, 2.0)
MIN_GAIN = 0.02
#: Experimental rule-derived features (`examples(rule_features=True)`).
TITLE_FEATURE = "[rule matches the title]"
TERMS_FEATURE = "[rule terms matched]"


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled paper of a topic, as the stage sees it."""

    arxiv_id: str
    label: bool
    rule: bool  # the topic's rule matches it
    day: str
    vector: Vector
    candidate: bool = False  # the topic's candidate rule matches it (the stage may accept it)


def dev_days(root: Path = CATALOG_DIR) -> dict[str, str]:
    """arXiv id -> announcement day of every dev paper."""
    return {row["arxiv_id"]: row["date"] for row in json_records(root / "dev.jsonl.gz")}


def deal(days: Iterable[str], folds: int) -> dict[str, int]:
    """Days in date order dealt round-robin into `folds` folds (each fold spans the year)."""
    return {day: index % folds for index, day in enumerate(sorted(set(days)))}


def examples(
    topics: Sequence[Labelled],
    catalog: Catalog,
    root: Path = CATALOG_DIR,
    candidates: Mapping[str, Callable[[Paper], bool]] | None = None,
    rule_features: bool = False,
) -> dict[str, list[Example]]:
    """slug -> the topic's labelled dev papers as `Example`s (each paper vectorised once;
    rule matches by the catalog's rules alone, no stage). With `rule_features` (an
    experiment the shipped stage cannot compute), two more features say how central the
    rule's words are: `TITLE_FEATURE` (the rule matches the title alone) and `TERMS_FEATURE`
    (how many of its terms matched, up to 6, over 6)."""
    papers = load_split("dev", root)
    days = dev_days(root)
    tagger = rule_tagger(catalog, [t.slug for t in topics], stage=SecondStage({}))
    ids = sorted({label.arxiv_id for t in topics for label in t.labels})
    docs = {i: Document.from_paper(papers[i]) for i in ids}
    vectors = {i: paper_vector(docs[i]) for i in ids}
    tags = {i: tagger.tag(docs[i]) for i in ids}
    titles = {i: tagger.tag(_title_only(papers[i])) for i in ids} if rule_features else {}
    found = {}
    for topic in topics:
        rows = []
        wider = (candidates or {}).get(topic.slug)
        for label in topic.labels:
            i = label.arxiv_id
            rule = topic.slug in tags[i]
            vector = vectors[i] | {RULE_FEATURE: 1.0 if rule else 0.0}
            if rule_features:
                vector[TITLE_FEATURE] = 1.0 if topic.slug in titles[i] else 0.0
                vector[TERMS_FEATURE] = min(len(tags[i].get(topic.slug, ())), 6) / 6
            candidate = bool(wider and not rule and wider(papers[i]))
            rows.append(Example(i, label.label, rule, days[i], vector, candidate))
        found[topic.slug] = rows
    return found


def _title_only(paper: Paper) -> Document:
    return Document(paper.title, "", paper.author_names, paper.categories)


def fit(rows: Sequence[Example], strength: float) -> LinearModel | None:
    """The stage's model on `rows`, pruned as shipped; None when one answer is missing, or
    when no feature is in `MIN_PAPERS` of them (a fold of a few papers: nothing to learn)."""
    if len({row.label for row in rows}) < 2:
        return None
    seen: Counter[str] = Counter()
    for row in rows:
        seen.update(row.vector)
    vectors = [{f: v for f, v in r.vector.items() if seen[f] >= MIN_PAPERS} for r in rows]
    if not any(vectors):
        return None
    model = fit_linear(vectors, [r.label for r in rows], strength=strength)
    return LinearModel.from_json(model.to_json(keep=KEEP_WEIGHTS))


def decide(
    row: Example, score: float | None, threshold: float | None, accept: float | None = None
) -> bool:
    """Whether the paper is tagged: the rule matches and the score reaches the threshold,
    or only the candidate rule matches and the score reaches `accept`."""
    if row.rule:
        return threshold is None or score is None or score >= threshold
    return row.candidate and accept is not None and score is not None and score >= accept


def weighted_f1(topic: Labelled, rows: Sequence[Example], hits: Mapping[str, bool]) -> float:
    kept = {row.arxiv_id for row in rows}
    subset = replace(topic, labels=tuple(lb for lb in topic.labels if lb.arxiv_id in kept))
    return evaluate(subset, hits)["weighted"]["f1"]


def out_of_fold(
    rows: Sequence[Example], fold_of: Callable[[Example], int], strength: float
) -> dict[str, float | None]:
    """arXiv id -> score by a model trained on the other folds (None: no model)."""
    scores: dict[str, float | None] = {}
    for fold in sorted({fold_of(row) for row in rows}):
        model = fit([r for r in rows if fold_of(r) != fold], strength)
        for row in rows:
            if fold_of(row) == fold:
                scores[row.arxiv_id] = model.score(row.vector) if model else None
    return scores


Choice = tuple[float, float | None, float | None]  # strength, threshold, accept


def choose(topic: Labelled, rows: Sequence[Example]) -> tuple[Choice, float]:
    """((strength, threshold, accept), weighted F1) that an inner cross-validation over
    `rows`' days finds best; ties go to the rule alone (None first), then lower values."""
    inner = deal((r.day for r in rows), INNER_FOLDS)
    accepts = ACCEPTS if any(r.candidate for r in rows) else (None,)
    best: tuple[float, Choice] | None = None
    for strength in STRENGTHS:
        scores = out_of_fold(rows, lambda r: inner[r.day], strength)
        for threshold in THRESHOLDS:
            for accept in accepts:
                hits = {r.arxiv_id: decide(r, scores[r.arxiv_id], threshold, accept) for r in rows}
                f1 = weighted_f1(topic, rows, hits)
                if best is None or f1 > best[0] + 1e-9:
                    best = (f1, (strength, threshold, accept))
    assert best is not None
    return best[1], best[0]


def cross_validate(topic: Labelled, rows: Sequence[Example]) -> dict[str, object]:
    """Rule alone against rule + stage, the stage's decisions all out of fold (module doc)."""
    outer = deal((r.day for r in rows), FOLDS)
    staged: dict[str, bool] = {}
    chosen = []
    for fold in range(FOLDS):
        train = [r for r in rows if outer[r.day] != fold]
        (strength, threshold, accept), _ = choose(topic, train)
        chosen.append([strength, threshold, accept])
        model = fit(train, strength)
        for row in rows:
            if outer[row.day] == fold:
                score = model.score(row.vector) if model else None
                staged[row.arxiv_id] = decide(row, score, threshold, accept)
    rule = {r.arxiv_id: r.rule for r in rows}
    figures = {"rule": evaluate(topic, rule), "stage": evaluate(topic, staged)}
    return {k: v["weighted"] for k, v in figures.items()} | {"chosen_per_fold": chosen}


def train_topic(topic: Labelled, rows: Sequence[Example]) -> dict[str, object]:
    """The topic's CV figures, and (when it helps) the model and threshold to ship."""
    cv = cross_validate(topic, rows)
    gain = round(cv["stage"]["f1"] - cv["rule"]["f1"], 4)
    (strength, threshold, accept), _ = choose(topic, rows)
    ship = gain >= MIN_GAIN and (threshold is not None or accept is not None)
    entry: dict[str, object] = {
        "cv": cv | {"gain": gain, "shipped": ship},
        "strength": strength,
        "threshold": threshold,
        "accept": accept,
    }
    if ship:
        model = fit(rows, strength)
        assert model is not None
        entry["model"] = json.loads(model.to_json())
    return entry


def labels_sha256(root: Path = CATALOG_DIR) -> str:
    """One sha256 over the dev split, its pools and its labels: what the stage learned from."""
    digest = hashlib.sha256()
    files = [root / "dev.jsonl.gz"]
    files += sorted((root / "pools" / "dev").glob("*.json"))
    files += sorted((root / "labels" / "dev").glob("*.jsonl"))
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def train(
    catalog: Catalog,
    catalog_sha: str,
    root: Path = CATALOG_DIR,
    only: Iterable[str] | None = None,
    progress: Callable[[str, dict], None] | None = None,
) -> dict[str, object]:
    """The shipped file's content: every labelled topic's CV figures, the models of the
    topics where the stage helps, and what they were trained from."""
    topics, problems = labelled_topics("dev", root)
    if problems:
        raise ValueError("label files that do not fit their pools: " + "; ".join(problems))
    wanted = None if only is None else set(only)
    topics = [t for t in topics if catalog.by_slug(t.slug) and (wanted is None or t.slug in wanted)]
    rows = examples(topics, catalog, root)
    entries = {}
    for topic in topics:
        entries[topic.slug] = train_topic(topic, rows[topic.slug])
        if progress is not None:
            progress(topic.slug, entries[topic.slug])
    return record(entries, labels_sha256(root), catalog_sha)


def record(entries: Mapping[str, dict], labels_sha: str, catalog_sha: str) -> dict[str, object]:
    cv = {
        slug: e["cv"] | {k: e[k] for k in ("strength", "threshold", "accept")}
        for slug, e in sorted(entries.items())
    }
    shipped = {
        slug: {"model": e["model"], "threshold": e["threshold"]}
        for slug, e in sorted(entries.items())
        if e["cv"]["shipped"]
    }
    return {
        "about": "second stage of the catalog topics (bot/topics/second_stage.py), written by "
        "python -m scripts.train_second_stage from the dev labels; cv: rule alone vs rule + "
        f"stage, weighted dev figures by {FOLDS}-fold cross-validation over announcement days",
        "trained_from": {
            "labels_sha256": labels_sha,
            "catalog_sha256": catalog_sha,
            "folds": FOLDS,
            "inner_folds": INNER_FOLDS,
            "strengths": list(STRENGTHS),
            "thresholds": list(THRESHOLDS),
            "keep_weights": KEEP_WEIGHTS,
            "min_gain": MIN_GAIN,
        },
        "cv": cv,
        "cv_macro_f1": cv_macro(cv),
        "topics": shipped,
    }


def cv_macro(cv: Mapping[str, Mapping]) -> dict[str, float | None]:
    """Macro-F1 of the cross-validated figures: rule alone, rule + stage where shipped, and
    rule + stage everywhere (what shipping every topic's stage would have given)."""
    if not cv:
        return {"rule": None, "shipped": None, "every_topic": None}

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4)

    return {
        "rule": mean([c["rule"]["f1"] for c in cv.values()]),
        "shipped": mean([c["stage" if c["shipped"] else "rule"]["f1"] for c in cv.values()]),
        "every_topic": mean([c["stage"]["f1"] for c in cv.values()]),
    }


def shipped_record(path: Path | None = None) -> dict:
    """The shipped file's content (`bot/topics/second_stage.json`, or `path`)."""
    from importlib import resources

    from bot.topics.second_stage import STAGE_FILE

    if path is not None:
        return json.loads(path.read_text(encoding="utf-8"))
    return json.loads(resources.files("bot.topics").joinpath(STAGE_FILE).read_text("utf-8"))


def print_stage_cv(content: Mapping, source: str) -> dict[str, object]:
    """The cross-validated table: per labelled topic rule alone against rule + stage (out of
    fold), whether the stage ships, macro-F1 and the worst five; returns the figures."""
    cv = content["cv"]
    print(f"\nsecond stage, {FOLDS}-fold cross-validation over dev days ({source}):")
    if not cv:
        print("  no cross-validated figures")
        return {}
    width = max(map(len, cv))
    print(
        f"{'topic':<{width}} {'rule P':>6} {'R':>5} {'F1':>5} | {'+stage P':>8} {'R':>5} "
        f"{'F1':>5} {'gain':>6}  C      threshold  shipped"
    )
    for slug, c in sorted(cv.items()):
        r, s = c["rule"], c["stage"]
        threshold = "-" if c["threshold"] is None else f"{c['threshold']:+.2f}"
        print(
            f"{slug:<{width}} {r['precision']:6.2f} {r['recall']:5.2f} {r['f1']:5.3f} | "
            f"{s['precision']:8.2f} {s['recall']:5.2f} {s['f1']:5.3f} {c['gain']:+6.3f}  "
            f"{c['strength']:<6g} {threshold:>9}  {'yes' if c['shipped'] else 'no'}"
        )
    macro = content["cv_macro_f1"]
    shipped = [slug for slug, c in cv.items() if c["shipped"]]
    print(
        f"macro-F1 (CV) over {len(cv)} topics: rule alone {macro['rule']:.4f}, with the "
        f"shipped stages ({len(shipped)}) {macro['shipped']:.4f}, with every topic's stage "
        f"{macro['every_topic']:.4f}"
    )
    ranked = sorted(cv, key=lambda s: (cv[s]["stage" if cv[s]["shipped"] else "rule"]["f1"], s))
    print(
        "worst five as shipped (CV): "
        + ", ".join(
            f"{s} {cv[s]['stage' if cv[s]['shipped'] else 'rule']['f1']:.3f}" for s in ranked[:5]
        )
    )
    return {"macro_f1": macro, "shipped": sorted(shipped), "worst_five": ranked[:5]}
