"""How consistently papers can be labelled: a second, independent reading of some labels.

    .venv/bin/python -m scripts.relevance_audit draw SLUG [SLUG ...]  # for a second reader
    .venv/bin/python -m scripts.relevance_audit score                 # agreement per topic, split

When rules score far lower on the held-out split than on dev, either the rules do not
generalise or the labels of the two splits were given differently. A second reader tells
which: for each topic, `draw` takes a seeded sample of the labelled papers of strata R and
S of each split (up to 15 labelled true and 15 false), mixes both splits in one shuffled
reading file (/tmp/pw_read/audit/<slug>.jsonl) that says neither the split nor the first
label, and records the ids drawn in audit/<slug>.json. The second reader labels them
against the topic's definition, without seeing the first labels, into
audit/labels/<slug>.jsonl (one `{"arxiv_id", "label", "note"}` a line). `score` prints,
per topic and split, how often the two readings agree and Cohen's kappa, and a JSON line.

It prints agreement only, never a paper, so it is no held-out consultation: it measures
the labels, not a rule. The audit files of held-out papers follow the held-out rules all
the same: a tuner does not read them.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from bench.relevance_catalog import CATALOG_DIR, SPLITS, labelled_topics, load_labels, load_split

AUDIT = CATALOG_DIR / "audit"
READ = Path("/tmp/pw_read/audit")


def draw(slugs: list[str], per_class: int) -> None:
    """Write the reading file and the record of ids for each topic."""
    from scripts.relevance_pool import write_reading

    papers = {split: load_split(split) for split in SPLITS}
    topics = {split: {t.slug: t for t in labelled_topics(split)[0]} for split in SPLITS}
    AUDIT.mkdir(exist_ok=True)
    for slug in slugs:
        record, reading = {}, []
        for split in SPLITS:
            topic = topics[split][slug]
            read = [lb for lb in topic.labels if topic.pool.stratum_of(lb.arxiv_id) != "control"]
            rng = random.Random(f"audit/{slug}/{split}")
            true = [lb.arxiv_id for lb in read if lb.label]
            false = [lb.arxiv_id for lb in read if not lb.label]
            ids = rng.sample(true, min(per_class, len(true)))
            ids += rng.sample(false, min(per_class, len(false)))
            record[split] = sorted(ids)
            reading += [papers[split][i] for i in ids]
        random.Random(slug).shuffle(reading)
        (AUDIT / f"{slug}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        out = write_reading(reading, READ / f"{slug}.jsonl")
        print(f"{slug}: {len(reading)} papers to read -> {out}")


def agreement(first: dict[str, bool], second: dict[str, bool]) -> dict[str, float | int]:
    """Share of papers both readings label alike, and Cohen's kappa, over the common ids."""
    ids = sorted(first.keys() & second.keys())
    n = len(ids)
    if not n:
        return {"papers": 0, "agreement": 0.0, "kappa": 0.0}
    agree = sum(first[i] == second[i] for i in ids) / n
    p1 = sum(first[i] for i in ids) / n
    p2 = sum(second[i] for i in ids) / n
    chance = p1 * p2 + (1 - p1) * (1 - p2)
    kappa = 1.0 if chance == 1 else (agree - chance) / (1 - chance)
    return {"papers": n, "agreement": round(agree, 3), "kappa": round(kappa, 3)}


def score() -> int:
    firsts = {
        split: {t.slug: {lb.arxiv_id: lb.label for lb in t.labels} for t in found}
        for split in SPLITS
        for found in [labelled_topics(split)[0]]
    }
    figures: dict[str, dict] = {}
    totals = {split: [0, 0] for split in SPLITS}
    for record_path in sorted(AUDIT.glob("*.json")):
        slug = record_path.stem
        labels_path = AUDIT / "labels" / f"{slug}.jsonl"
        if not labels_path.exists():
            print(f"{slug}: drawn, not read yet")
            continue
        record = json.loads(record_path.read_text(encoding="utf-8"))
        second = {lb.arxiv_id: lb.label for lb in load_labels(labels_path)}
        for split in SPLITS:
            first = {i: firsts[split][slug][i] for i in record[split]}
            found = agreement(first, second)
            figures.setdefault(slug, {})[split] = found
            totals[split][0] += round(found["agreement"] * found["papers"])
            totals[split][1] += found["papers"]
            print(
                f"{slug:<40} {split:<8} papers {found['papers']:>3}  "
                f"agree {found['agreement']:.2f}  kappa {found['kappa']:.2f}"
            )
    overall = {s: round(a / n, 3) if n else None for s, (a, n) in totals.items()}
    for split, share in overall.items():
        print(f"{split}: the two readings agree on {share} of {totals[split][1]} papers")
    print(json.dumps({"topics": figures, "overall": overall}, sort_keys=True))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    drawing = sub.add_parser("draw")
    drawing.add_argument("slugs", nargs="+")
    drawing.add_argument("--per-class", type=int, default=15)
    sub.add_parser("score")
    args = parser.parse_args()
    if args.what == "draw":
        draw(args.slugs, args.per_class)
        return 0
    return score()


if __name__ == "__main__":
    sys.exit(main())
