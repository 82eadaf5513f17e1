"""Tagging throughput with the bundled catalog, on real abstracts, on one core.

    .venv/bin/python -m bench.bench_tagger

Tags real papers with the full catalog (tokenising included) and reports papers/s,
then the per-paper cost as the catalog grows: its first 30 and 120 topics, all of
it, and 500 rules (the catalog's rules repeated under new keys, since no 500-topic
catalog exists). Two workloads: a whole real daily arXiv listing (1,504 papers of
every archive, what the poller tags), and the relevance development set (445
2025-26 AI papers chosen for RL and agent words: the worst case, since most rules
about agents and RL must run on them). Goal: >= 5,000 papers/s with the full catalog.
The last line is JSON with every figure.

    .venv/bin/python -m bench.bench_tagger --against OLD.toml   # also: this catalog vs another

`--against` times the bundled catalog and another one (say the catalog of an earlier commit,
`git show REV:bot/topics/catalog.toml > /tmp/old.toml`) in alternating rounds on the daily
listing, so that a busy or slow machine affects both alike: the ratio is what a catalog
edit costs, whatever the absolute figure on the day.

    .venv/bin/python -m bench.bench_tagger --instructions   # CPU instructions per paper

The tagger timed is the one ingest uses (`catalog_tagger`: rules, then the shipped second
stage of `bot.topics.second_stage`). A last section times the daily listing, in alternating
rounds, with the rules alone, with the shipped stage, and with a stage on every labelled
topic (fitted here from the dev labels, as scripts/train_second_stage.py fits one): what
tagging would cost if every topic's stage were shipped.

`--instructions` runs the tagging of the first 300 papers of the daily listing under valgrind's
callgrind, and once more with none to subtract start-up: a count of instructions, not seconds,
that is the same on a busy machine as on a quiet one (a code change is judged by it when the
machine is too noisy to time; a few minutes, valgrind must be installed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

from bench.fixtures import DEVSET, daily_listing, read_paper_file
from bench.harness import best_of
from bot.topics.catalog import load_catalog
from bot.topics.document import Document
from bot.topics.second_stage import SecondStage, TopicStage, bundled_stage
from bot.topics.tag_rules import catalog_rules
from bot.topics.tagger import Tagger
from bot.topics.text_model import paper_vector


def rate(tagger: Tagger, papers: list, rounds: int = 5) -> float:
    """Best papers/s over a few rounds (tokenising included: each round re-reads papers)."""

    def tag_all() -> None:
        for paper in papers:
            tagger.tag(paper)

    return len(papers) / best_of(rounds, tag_all)


def workload(name: str, papers: list, rules: list) -> dict[str, int]:
    sizes = {"30": rules[:30], "120": rules[:120], f"all ({len(rules)})": rules}
    sizes["500"] = [
        (f"{key}#{n}", query)
        for n, (key, query) in zip(range(500), itertools.cycle(rules), strict=False)
    ]
    mean_chars = sum(len(p.title) + len(p.abstract) for p in papers) / len(papers)
    print(f"{name}: {len(papers)} papers, {mean_chars:.0f} characters of title+abstract")
    figures: dict[str, int] = {}
    for label, subset in sizes.items():
        per_second = rate(Tagger(subset, stage=bundled_stage()), papers)
        figures[label.split()[0]] = round(per_second)
        print(f"{label:>10} rules: {per_second:8,.0f} papers/s  {1e6 / per_second:6.1f} µs/paper")
    return figures


def side_by_side(listing: list, rules: list, other: Path, rounds: int = 5) -> dict[str, float]:
    """Best papers/s of this catalog and of `other`, timed in alternating rounds."""
    taggers = {"this": Tagger(rules), "other": Tagger(catalog_rules(load_catalog(other)))}
    best = dict.fromkeys(taggers, 0.0)
    for _ in range(rounds):
        for name, tagger in taggers.items():
            best[name] = max(best[name], rate(tagger, listing, rounds=1))
    ratio = best["this"] / best["other"]
    print(f"side by side on the daily listing: this catalog {best['this']:,.0f} papers/s,")
    print(f"{other}: {best['other']:,.0f} papers/s; this one costs {1 / ratio - 1:+.1%} a paper")
    return {"this": round(best["this"]), "other": round(best["other"]), "ratio": round(ratio, 3)}


def every_topic_stage() -> SecondStage:
    """A stage on every labelled topic, fitted from the dev labels (threshold 0)."""
    from bench.relevance_catalog import labelled_topics
    from bench.relevance_stage import examples, fit

    topics = labelled_topics("dev")[0]
    rows = examples(topics, load_catalog())
    models = {t.slug: fit(rows[t.slug], 30.0) for t in topics}
    return SecondStage({s: TopicStage(s, m, 0.0) for s, m in models.items() if m is not None})


def with_stage(listing: list, rules: list, rounds: int = 5) -> dict[str, int]:
    """Best papers/s on the daily listing: rules alone, the shipped stage, every topic's."""
    every = every_topic_stage()
    taggers = {
        "rules alone": Tagger(rules),
        f"shipped stage ({len(bundled_stage())} topics)": Tagger(rules, stage=bundled_stage()),
        f"a stage on all {len(every)} labelled topics": Tagger(rules, stage=every),
    }
    best = dict.fromkeys(taggers, 0.0)
    for _ in range(rounds):
        for name, tagger in taggers.items():
            best[name] = max(best[name], rate(tagger, listing, rounds=1))
    print(f"second stage on the daily listing ({len(listing)} papers), alternating rounds:")
    for name, per_second in best.items():
        print(f"{name:>40}: {per_second:8,.0f} papers/s  {1e6 / per_second:6.1f} µs/paper")
    docs = [Document.from_paper(paper) for paper in listing]
    vectors = len(docs) / best_of(rounds, lambda: [paper_vector(doc) for doc in docs])
    print(f"{'paper_vector alone (tokenised papers)':>40}: {vectors:8,.0f} papers/s")
    return {name: round(value) for name, value in best.items()} | {"vectors": round(vectors)}


def instructions(papers: int = 300) -> dict[str, int]:
    """Instructions per paper to tag the listing's first `papers`, counted by callgrind."""

    def count(n: int) -> int:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        command += [sys.executable, "-m", "bench.bench_tagger", "--tag-only", str(n)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        return int(re.search(r"refs:\s+([\d,]+)", done.stderr).group(1).replace(",", ""))

    per_paper = (count(papers) - count(0)) // papers
    print(f"tagging with the full catalog: {per_paper:,} instructions per paper (callgrind)")
    return {"papers": papers, "instructions_per_paper": per_paper}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another catalog TOML to time side by side")
    parser.add_argument("--instructions", action="store_true", help="count, under callgrind")
    parser.add_argument("--tag-only", type=int, metavar="N", help=argparse.SUPPRESS)
    args = parser.parse_args()
    rules = list(catalog_rules(load_catalog()))
    listing = daily_listing()
    if args.tag_only is not None:  # the workload --instructions counts
        Tagger(rules).tag_many(listing[: args.tag_only])
        return
    if args.instructions:
        print(json.dumps(instructions()))
        return
    if args.against:
        print(json.dumps({"side_by_side": side_by_side(listing, rules, args.against)}))
        return
    devset = read_paper_file(DEVSET)
    figures = {
        "daily_listing": workload("a real daily listing", listing, rules),
        "devset": workload("the RL/agent development set", devset, rules),
    }
    full = figures["daily_listing"]["all"]
    print(f"full catalog on a daily listing: {full:,} papers/s (goal >= 5,000)")
    figures["second_stage"] = with_stage(listing, rules)
    print(json.dumps({"rules": len(rules), "papers_per_s": figures}))


if __name__ == "__main__":
    main()
