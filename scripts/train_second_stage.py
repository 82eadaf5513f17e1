"""Train the catalog topics' second stage from the dev labels and write the shipped file.

    .venv/bin/python -m scripts.train_second_stage             # -> bot/topics/second_stage.json
    .venv/bin/python -m scripts.train_second_stage --jobs 2    # topics on two processes
    .venv/bin/python -m scripts.train_second_stage --check     # retrain; fail if the file differs
    .venv/bin/python -m scripts.train_second_stage --topic SLUG --out /tmp/x.json  # one topic
    .venv/bin/python -m scripts.train_second_stage --wider --out /tmp/wider.json   # recall

`--wider` measures whether the stage could also win recall: papers the rule misses but the
topic's labelling screen (and focus, when the topic has one; tests/fixtures/relevance/
catalog/topics/<slug>.toml) matches become candidates the model may accept above a score.
It is an experiment: the screens are labelling tools, not catalog rules, so its output
is never the shipped file. `--rule-features` is another: two more features saying how
central the rule's words are (it matches the title alone; how many of its terms matched),
which the shipped stage does not compute.

For every topic labelled on dev (tests/fixtures/relevance/catalog/), it measures rule alone
against rule + stage by cross-validation over announcement days, chooses the regularisation
and threshold by an inner cross-validation, and ships the topic's model only where the
stage helps (bench/relevance_stage.py says exactly how). It never reads the held-out split.
The output is deterministic: the same labels and catalog give a byte-identical file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from bench.fixtures import ROOT
from bench.relevance_catalog import CATALOG_DIR, labelled_topics
from bench.relevance_holdout import sha256
from bench.relevance_stage import examples, labels_sha256, record, train_topic
from bot.domain import Paper
from bot.topics.catalog import load_catalog

SHIPPED = ROOT / "bot" / "topics" / "second_stage.json"
CATALOG = ROOT / "bot" / "topics" / "catalog.toml"


def render(content: dict) -> str:
    """The file's text: sorted keys, one level of indent per nesting, a final newline."""
    return json.dumps(content, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def wider_candidates(slugs: list[str]) -> dict[str, Callable[[Paper], bool]]:
    """slug -> whether the topic's labelling screen (and focus) matches a paper."""
    found = {}
    for slug in slugs:
        spec = tomllib.loads((CATALOG_DIR / "topics" / f"{slug}.toml").read_text("utf-8"))
        patterns = [re.compile(spec[k], re.IGNORECASE) for k in ("screen", "focus") if k in spec]
        found[slug] = partial(_matches_all, patterns)
    return found


def _matches_all(patterns: list[re.Pattern[str]], paper: Paper) -> bool:
    text = f"{paper.title}\n{paper.abstract}"
    return all(p.search(text) for p in patterns)


def build(only: list[str] | None, jobs: int, wider: bool = False, central: bool = False) -> dict:
    catalog = load_catalog()
    topics, problems = labelled_topics("dev")
    if problems:
        raise SystemExit("label files that do not fit their pools: " + "; ".join(problems))
    topics = [t for t in topics if catalog.by_slug(t.slug) and (not only or t.slug in only)]
    candidates = wider_candidates([t.slug for t in topics]) if wider else None
    rows = examples(topics, catalog, candidates=candidates, rule_features=central)
    work = [(t, rows[t.slug]) for t in topics]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(_train, work))
    entries = {}
    for topic, entry in zip(topics, done, strict=True):
        entries[topic.slug] = entry
        cv = entry["cv"]
        rule, stage = cv["rule"], cv["stage"]
        print(
            f"{topic.slug:48} rule P {rule['precision']:.2f} R {rule['recall']:.2f} "
            f"F1 {rule['f1']:.3f} | +stage P {stage['precision']:.2f} R {stage['recall']:.2f} "
            f"F1 {stage['f1']:.3f} ({cv['gain']:+.3f}){'  SHIPPED' if cv['shipped'] else ''}",
            flush=True,
        )
    return record(entries, labels_sha256(), sha256(CATALOG))


def _train(work: tuple) -> dict:
    topic, rows = work
    return train_topic(topic, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SHIPPED)
    parser.add_argument("--topic", action="append", metavar="SLUG", help="only these topics")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--check", action="store_true", help="fail if --out would change")
    parser.add_argument("--wider", action="store_true", help="recall experiment (see above)")
    parser.add_argument("--rule-features", action="store_true", help="experiment (see above)")
    args = parser.parse_args(argv)
    if (args.wider or args.rule_features) and args.out == SHIPPED:
        parser.error("--wider and --rule-features are experiments: give --out another file")
    content = build(args.topic, args.jobs, args.wider, args.rule_features)
    text = render(content)
    macro = content["cv_macro_f1"]
    print(
        f"cross-validated macro-F1 over {len(content['cv'])} topics: rule {macro['rule']}, "
        f"rule + shipped stages {macro['shipped']} ({len(content['topics'])} topics shipped), "
        f"rule + every topic's stage {macro['every_topic']}"
    )
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'identical' if same else 'DIFFERS'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
