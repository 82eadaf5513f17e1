"""How well the bundled catalog tags papers: the flagship sets, the labelled catalog, the tags.

Run from the repository root:

    .venv/bin/python -m bench.relevance                 # dev figures of every labelled topic
    .venv/bin/python -m bench.relevance --topic SLUG    # one topic's dev errors, to act on
    .venv/bin/python -m bench.relevance --fold tune     # dev figures of the tune days alone
    .venv/bin/python -m bench.relevance --fold check --topic SLUG  # check days: figures only
    .venv/bin/python -m bench.relevance --holdout       # also held-out (logged in HOLDOUT_LOG.md)
    .venv/bin/python -m bench.relevance --write-figures # dev figures -> catalog/figures.json
    .venv/bin/python -m bench.relevance --freeze        # once labelling is done -> FROZEN.json
    .venv/bin/python -m bench.relevance --stage-cv      # recompute the second stage's CV table

It prints, then ends with one JSON line holding every figure:

1. the flagship "RL for LLM Agents" on its first labelled sets, against one-category
   baselines, and the seed page's tags (bench/relevance_flagship.py);
2. for every topic labelled in tests/fixtures/relevance/catalog/ (its README says how):
   precision, recall and F1 on dev weighted by how the papers read were sampled
   (bench/relevance_catalog.py), the plain figures over all labelled papers, the
   controls, and the unlabelled hits of the current rule (bench/relevance_unlabelled.py);
   macro-F1 and the worst five topics; with --holdout the same on the held-out split;
3. tags per paper on real daily listings, topics on more than 15% of one, and agreement
   with the seed page's curated tags counting its "+N" (bench/relevance_tags.py);
4. the second stage (bot/topics/second_stage.py): per labelled topic, rule alone against
   rule + stage by cross-validation over dev days, as the trainer recorded it in the shipped
   second_stage.json (--stage-cv recomputes it, a few minutes; bench/relevance_stage.py).
   The tagger measured everywhere above is the shipped one, stage included: its dev figures
   are in-sample for the stage, the cross-validated ones are not.

Held-out figures (the catalog's held-out split and the flagship's first held-out set) are
computed only with --holdout; each such run is appended to
HOLDOUT_LOG.md and refuses to run when the held-out files differ from FROZEN.json
(bench/relevance_holdout.py). Nothing ever prints a held-out paper.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import relevance_holdout as holdout_rules
from bench.fixtures import ROOT
from bench.relevance_catalog import (
    CATALOG_DIR,
    FOLDS,
    Labelled,
    evaluate,
    f1_interval,
    labelled_topics,
    load_split,
    macro_f1,
    rule_tagger,
    worst,
)
from bench.relevance_flagship import (
    DEVSET,
    HOLDOUT,
    SEED,
    Scores,
    measure,
    score,
    wilson,
)
from bench.relevance_report import (
    goals,
    print_catalog,
    print_flagship,
    print_goals,
    print_tags,
    topic_report,
)
from bench.relevance_stage import print_stage_cv, shipped_record, train
from bench.relevance_tags import measure_tags
from bench.relevance_unlabelled import unlabelled_hits
from bot.topics.catalog import Catalog, load_catalog

__all__ = ["Scores", "catalog_figures", "main", "measure", "score", "wilson"]
FIGURES = CATALOG_DIR / "figures.json"
BUNDLED_CATALOG = ROOT / "bot" / "topics" / "catalog.toml"


def catalog_figures(
    catalog: Catalog,
    split: str,
    unlabelled: bool = False,
    root: Path = CATALOG_DIR,
    fold: str | None = None,
) -> dict[str, object]:
    """Figures of every labelled topic on `split` (see bench/relevance_catalog.py); with
    `unlabelled`, also each topic's unlabelled hits (tags the whole split); with `fold`,
    over that fold's dev days alone."""
    found, problems = labelled_topics(split, root, fold)
    papers = load_split(split, root)
    topics: list[Labelled] = []
    for topic in found:
        if catalog.by_slug(topic.slug) is None:
            problems.append(f"{topic.slug} ({split}): no such topic in the catalog")
        elif missing := [lb.arxiv_id for lb in topic.labels if lb.arxiv_id not in papers]:
            problems.append(f"{topic.slug} ({split}): {len(missing)} ids not in {split}.jsonl.gz")
        else:
            topics.append(topic)
    tagger = rule_tagger(catalog, [t.slug for t in topics])
    ids = {label.arxiv_id for t in topics for label in t.labels}
    tags = {arxiv_id: tagger.tag(papers[arxiv_id]) for arxiv_id in ids}
    figures = {}
    for t in topics:
        hits = {lb.arxiv_id: t.slug in tags[lb.arxiv_id] for lb in t.labels}
        figures[t.slug] = evaluate(t, hits) | {"f1_ci95": f1_interval(t, hits)}
    if unlabelled:
        for slug, hits in unlabelled_hits(topics, papers, catalog, tagger).items():
            figures[slug]["unlabelled_hits"] = hits["count"]
    return {
        "split": split,
        "papers": len(papers),
        "topics": figures,
        "macro_f1": macro_f1(figures),
        "worst_five": worst(figures),
        "problems": problems,
    }


def write_figures(
    catalog: Catalog, catalog_sha: str, path: Path = FIGURES, root: Path = CATALOG_DIR
) -> dict:
    """The committed dev figures the regression test compares with (never held-out).
    Nothing is written while a label file does not fit its pool (its topic would be
    left out); the figures are returned either way, with their problems."""
    dev = catalog_figures(catalog, "dev", root=root)
    if dev["problems"]:
        return dev
    record = {
        "about": "weighted dev figures per labelled topic; written by python -m bench.relevance "
        "--write-figures; tests/unit/test_relevance_catalog.py fails on a drop > 0.05",
        "commit": holdout_rules.commit(),
        "catalog_sha256": catalog_sha,
        "macro_f1": dev["macro_f1"],
        "topics": {
            slug: f["weighted"] | {"positives_read": f["positives_read"]}
            for slug, f in sorted(dev["topics"].items())
        },
    }
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return dev


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=None, help="catalog TOML (bundled)")
    parser.add_argument("--devset", type=Path, default=DEVSET)
    parser.add_argument("--seed", type=Path, default=SEED)
    parser.add_argument("--holdout-file", type=Path, default=HOLDOUT, help="flagship v1 set")
    parser.add_argument("-v", "--verbose", action="store_true", help="list flagship dev errors")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--topic", metavar="SLUG", help="a topic's dev errors (slug or name)")
    what.add_argument("--holdout", action="store_true", help="also the held-out split (logged)")
    what.add_argument("--write-figures", action="store_true", help="write figures.json (dev)")
    what.add_argument("--freeze", action="store_true", help="write FROZEN.json")
    what.add_argument(
        "--stage-cv", action="store_true", help="recompute the second stage's CV (dev, slow)"
    )
    parser.add_argument("--force", action="store_true", help="--freeze over a different one")
    parser.add_argument(
        "--fold", choices=FOLDS, help="dev figures (and --topic) of the tune or check days alone"
    )
    return parser


def _freeze(force: bool) -> int:
    """Freeze the held-out files, once every held-out label file fits its pool (checking
    that computes no figure, so it is no consultation)."""
    _, problems = labelled_topics("holdout")
    if problems:
        print("not frozen: held-out label files that do not fit their pools:")
        print("\n".join(f"  {p}" for p in problems))
        return 2
    before = holdout_rules.frozen_differences()
    differences = holdout_rules.freeze(force=force)
    if differences:
        print("FROZEN.json exists and differs; not overwritten (--force to do so):")
        print("\n".join(f"  {d}" for d in differences))
        return 2
    done = "already match" if before == [] else "frozen"
    files = len(holdout_rules.held_out_files())
    print(f"{files} held-out files {done}: {holdout_rules.FROZEN}")
    return 0


def _frozen_or_refuse() -> bool:
    """Whether the held-out files may be consulted; says loudly why not."""
    differences = holdout_rules.frozen_differences()
    if differences is None:
        print("WARNING: the held-out split is not frozen yet (no FROZEN.json; see --freeze)")
        return True
    if differences:
        print("!" * 78, file=sys.stderr)
        print("HELD-OUT FILES DIFFER FROM FROZEN.json: no held-out figures.", file=sys.stderr)
        print("\n".join(f"  {d}" for d in differences), file=sys.stderr)
        print("!" * 78, file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    catalog = load_catalog(args.catalog) if args.catalog else load_catalog()
    catalog_sha = holdout_rules.sha256(args.catalog or BUNDLED_CATALOG)
    if args.freeze:
        return _freeze(args.force)
    if args.stage_cv:
        content = train(catalog, catalog_sha)
        figures = print_stage_cv(content, "recomputed")
        print(json.dumps({"stage_cv": figures | {"topics": content["cv"]}}, sort_keys=True))
        return 0
    if args.topic:
        return topic_report(catalog, args.topic, args.fold)
    if args.fold:
        dev = catalog_figures(catalog, "dev", fold=args.fold)
        print_catalog(dev, None)
        print(json.dumps({"fold": args.fold, "catalog_dev": dev}, sort_keys=True))
        return 0
    if args.write_figures:
        dev = write_figures(catalog, catalog_sha)
        print_catalog(dev, None)
        if dev["problems"]:
            print(f"NOT WRITTEN: {len(dev['problems'])} label files do not fit their pools")
            return 2
        print(f"wrote {len(dev['topics'])} topics' dev figures to {FIGURES}")
        return 0
    if args.holdout and not _frozen_or_refuse():
        return 2
    # The flagship's first held-out set too is read only with --holdout.
    flagship_holdout = args.holdout_file if args.holdout else None
    figures = measure(
        catalog, args.devset, args.seed, verbose=args.verbose, holdout=flagship_holdout
    )
    print_flagship(figures, flagship_holdout)
    dev = catalog_figures(catalog, "dev", unlabelled=True)
    held = catalog_figures(catalog, "holdout") if args.holdout else None
    print_catalog(dev, held)
    tags = measure_tags(catalog, rule_tagger(catalog))
    print_tags(tags)
    stage = print_stage_cv(shipped_record(), "as recorded in bot/topics/second_stage.json")
    if held is not None:
        line = holdout_rules.log_consultation(catalog_sha, held["macro_f1"], len(held["topics"]))
        print(f"held-out consultation logged in {holdout_rules.HOLDOUT_LOG.name}: {line.strip()}")
    met = goals(figures, dev, held, tags)
    print_goals(met)
    figures |= {"catalog_sha256": catalog_sha, "catalog_dev": dev, "catalog_holdout": held}
    print(json.dumps(figures | {"tags": tags, "goals": met, "stage_cv": stage}, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
