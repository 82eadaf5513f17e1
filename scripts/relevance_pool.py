"""Build the labelled catalog evaluation's paper splits and reading pools.

    .venv/bin/python -m scripts.relevance_pool splits                 # once: copy the papers in
    .venv/bin/python -m scripts.relevance_pool pool SLUG --split dev  # a topic's pool, to read
    .venv/bin/python -m scripts.relevance_pool extend SLUG --split dev --focus 50 --rest 15
                                                                      # read more of a labelled pool

`splits` copies the real daily papers of ../shared/fixtures/arxiv/daily/ into
tests/fixtures/relevance/catalog/{dev,holdout}.jsonl.gz. The split is by day: the days of
SOURCES.md section 6 (2026-05-12, 2026-06-08 to 06-12, 2026-08-10 to 08-12; sources
meelod, wlsgur073, gE0650) are the frozen held-out split, never used for tuning; every
other day is the development split.

`pool` writes the papers a person reads to label one topic on one split, and records how
they were chosen in pools/<split>/<slug>.json. The split's papers fall in three strata:
- R: the papers the topic's catalog rule tags (the rule as committed when the pool is made);
- S: the others that the topic's screen matches (topics/<slug>.toml: a broad,
  case-insensitive regular expression over title and abstract, written from the
  definition before any labelling);
- C: the rest.
A seeded random sample is read from each: up to `cap_rule` (40) of R, up to `cap_screen`
(40) of S, and `control` (10) of C. bench/relevance.py weights each labelled paper of R
and S by its stratum's size over the papers read from it, so that precision and recall
estimate the figures over R and S of the whole split, whatever rule is measured; C shows
what the screen misses and is reported on its own. The reading file
(/tmp/pw_read/<split>/<slug>.jsonl) is shuffled and does not say which stratum a paper came
from, so labels are given blind to the rule.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import tomllib
from pathlib import Path

from bench.fixtures import ROOT, json_records
from bench.relevance_catalog import CATALOG_DIR, load_split, rule_tagger
from bot.domain import Paper
from bot.topics.catalog import load_catalog

SHARED = ROOT.parent / "shared" / "fixtures" / "arxiv" / "daily"
HERE = CATALOG_DIR
HOLDOUT_SOURCES = (
    "meelod_daily-arXiv-ai-enhanced",
    "wlsgur073_daily-arXiv-ai-enhanced",
    "gE0650_daily-arXiv-ai-enhanced",
)
READ = Path("/tmp/pw_read")


def build_splits() -> None:
    splits: dict[str, list[dict]] = {"dev": [], "holdout": []}
    for path in sorted(SHARED.glob("*/*.jsonl")):
        split = "holdout" if path.parent.name in HOLDOUT_SOURCES else "dev"
        for row in json_records(path):
            row["source"] = path.parent.name
            splits[split].append(row)
    for split, rows in splits.items():
        out = HERE / f"{split}.jsonl.gz"
        # mtime=0: the same papers always give the same bytes (and sha256).
        with gzip.GzipFile(out, "wb", mtime=0) as f:
            for row in sorted(rows, key=lambda r: (r["date"], r["arxiv_id"])):
                f.write((json.dumps(row, ensure_ascii=False) + "\n").encode())
        print(f"{split}: {len(rows)} papers -> {out.relative_to(ROOT)}")


def topics() -> dict[str, dict]:
    """The labelled topics: one file each, topics/<slug>.toml (definition, screen, ...)."""
    return {
        path.stem: tomllib.loads(path.read_text(encoding="utf-8"))
        for path in sorted((HERE / "topics").glob("*.toml"))
    }


def write_reading(papers: list[Paper], out: Path) -> Path:
    """A reading file: what a labeller sees of each paper, in the order given, and nothing
    that says why a paper was drawn."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for paper in papers:
            keep = {
                "arxiv_id": paper.arxiv_id,
                "title": paper.title,
                "abstract": paper.abstract,
                "categories": list(paper.categories),
            }
            f.write(json.dumps(keep, ensure_ascii=False) + "\n")
    return out


def make_pool(slug: str, split: str, *, force: bool = False) -> None:
    spec = topics()[slug]
    caps = {
        "rule": int(spec.get("cap_rule", 40)),
        "screen": int(spec.get("cap_screen", 40)),
        "control": int(spec.get("control", 10)),
    }
    catalog = load_catalog()
    if catalog.by_slug(slug) is None:
        sys.exit(f"no catalog topic {slug!r}")
    tagger = rule_tagger(catalog, [slug])
    screen = re.compile(spec["screen"], re.IGNORECASE)
    by_id = load_split(split)
    strata: dict[str, list[str]] = {"rule": [], "screen": [], "control": []}
    for arxiv_id, paper in by_id.items():
        if slug in tagger.tag(paper):
            strata["rule"].append(arxiv_id)
        elif screen.search(paper.title + "\n" + paper.abstract):
            strata["screen"].append(arxiv_id)
        else:
            strata["control"].append(arxiv_id)
    rng = random.Random(f"{slug}/{split}")
    record: dict = {"slug": slug, "split": split, "strata": {}}
    chosen: list[str] = []
    for name, ids in strata.items():
        read = sorted(rng.sample(ids, min(caps[name], len(ids))))
        record["strata"][name] = {"size": len(ids), "read": read}
        chosen += read
    target = HERE / "pools" / split / f"{slug}.json"
    if target.exists() and json.loads(target.read_text()) != record and not force:
        # The strata were drawn with the rule of their day; drawing them again with a tuned
        # rule would lose the labels' weights. Only a labeller widening a pool may do it.
        sys.exit(f"{target} exists and would change; --force re-draws it (then re-label)")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record, indent=1) + "\n")
    reading = [by_id[i] for i in chosen]
    rng.shuffle(reading)
    out = write_reading(reading, READ / split / f"{slug}.jsonl")
    sizes = ", ".join(f"{k} {len(v['read'])}/{v['size']}" for k, v in record["strata"].items())
    print(f"{slug} {split}: read {sizes} -> {out}")


def divide_and_draw(
    record: dict,
    screen_ids: list[str],
    focus_ids: set[str] | None,
    more_focus: int,
    more_rest: int,
    rng: random.Random,
) -> list[str]:
    """Widen a pool record in place (see `extend`); return the ids newly drawn.

    `screen_ids` is stratum S as the pool was drawn; `focus_ids` the part of it the focus
    matches (None: S stays one stratum and `more_rest` papers are drawn from it).
    """
    strata = record["strata"]
    read = set(strata["screen"]["read"]) | set(strata.get("focus", {}).get("read", ()))
    if focus_ids is None:
        parts = {"screen": (screen_ids, more_rest)}
    else:
        parts = {
            "focus": ([i for i in screen_ids if i in focus_ids], more_focus),
            "screen": ([i for i in screen_ids if i not in focus_ids], more_rest),
        }
    new: list[str] = []
    divided = {}
    for name, (ids, more) in parts.items():
        unread = [i for i in ids if i not in read]
        drawn = rng.sample(unread, min(more, len(unread)))
        new += drawn
        divided[name] = {"size": len(ids), "read": sorted(set(ids) & read | set(drawn))}
    record["strata"] = {"rule": strata["rule"], **divided, "control": strata["control"]}
    return new


def extend_pool(slug: str, split: str, more_focus: int, more_rest: int, more_rule: int) -> None:
    from bench.relevance_catalog import labelled_topics, load_pool
    from bench.relevance_unlabelled import rule_then
    from bot.topics.document import Document

    spec = topics()[slug]
    target = HERE / "pools" / split / f"{slug}.json"
    record = json.loads(target.read_text(encoding="utf-8"))
    labelled = {t.slug: t for t in labelled_topics(split)[0]}
    if slug not in labelled:
        sys.exit(f"{slug} ({split}): no label file that fits the pool; label the pool first")
    by_id = load_split(split)
    docs = {i: Document.from_paper(paper) for i, paper in by_id.items()}
    then, why = rule_then(labelled[slug], docs, load_catalog())
    if then is None:
        sys.exit(f"{slug} ({split}): stratum R cannot be rebuilt: {why}")
    screen = re.compile(spec["screen"], re.IGNORECASE)
    text = {i: paper.title + "\n" + paper.abstract for i, paper in by_id.items()}
    screen_ids = sorted(i for i in by_id if i not in then and screen.search(text[i]))
    pool = load_pool(target)
    if len(screen_ids) != sum(pool.strata[n].size for n in ("focus", "screen") if n in pool.strata):
        sys.exit(f"{slug} ({split}): the screen no longer gives the pool's S; not widened")
    focus_ids = None
    if "focus" in spec:
        if record.get("focus", spec["focus"]) != spec["focus"]:
            sys.exit(f"{slug} ({split}): the focus changed since the pool was divided")
        record["focus"] = spec["focus"]
        pattern = re.compile(spec["focus"], re.IGNORECASE)
        focus_ids = {i for i in screen_ids if pattern.search(text[i])}
    elif "focus" in record["strata"]:
        sys.exit(f"{slug} ({split}): the pool has a focus stratum but the topic file no focus")
    rng = random.Random(f"{slug}/{split}/more/{len(pool.read)}")
    new = divide_and_draw(record, screen_ids, focus_ids, more_focus, more_rest, rng)
    rule_read = set(record["strata"]["rule"]["read"])
    drawn = rng.sample(sorted(then - rule_read), min(more_rule, len(then - rule_read)))
    record["strata"]["rule"]["read"] = sorted(rule_read | set(drawn))
    new += drawn
    target.write_text(json.dumps(record, indent=1) + "\n")
    reading = [by_id[i] for i in new]
    rng.shuffle(reading)
    out = write_reading(reading, READ / split / f"{slug}.more.jsonl")
    sizes = ", ".join(f"{k} {len(v['read'])}/{v['size']}" for k, v in record["strata"].items())
    print(f"{slug} {split}: {len(new)} more to read ({sizes}) -> {out}")


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("splits")
    pool = sub.add_parser("pool")
    pool.add_argument("slug")
    pool.add_argument("--split", choices=("dev", "holdout"), required=True)
    pool.add_argument("--force", action="store_true", help="re-draw an existing pool")
    more = sub.add_parser("extend", help="read more of an existing pool's S (see above)")
    more.add_argument("slug")
    more.add_argument("--split", choices=("dev", "holdout"), required=True)
    more.add_argument("--focus", type=int, default=50, help="papers more from F (focus)")
    more.add_argument("--rest", type=int, default=15, help="papers more from the rest of S")
    more.add_argument("--rule", type=int, default=0, help="papers more from R")
    args = parser.parse_args()
    if args.what == "splits":
        build_splits()
    elif args.what == "extend":
        extend_pool(args.slug, args.split, args.focus, args.rest, args.rule)
    else:
        make_pool(args.slug, args.split, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
