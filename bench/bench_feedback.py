"""👍/👎 feedback (issue 20's goals): does a chat's learned model order a digest better than the
rule alone, and what does training cost?

(a) For every labelled topic of the catalog's dev split (tests/fixtures/relevance/catalog), a
simulated reader votes 👍 on 10 of its labelled positives and 👎 on 10 of its labelled negatives
(a seeded draw). The digest the chat would then get is the rest of the topic's labelled papers
that the topic's rule tags; precision@5 of that digest's first five is compared between the
rule-only order (what digests do without a model: newest first, `bot.topics.content.digest`)
and the model's order (`bot.topics.learned`, as the worker trains it). A topic with fewer than 5
such papers, or without 10 labelled papers of each kind besides them, is left out. Repeated for
a few seeds: a topic "wins" when the model's precision@5 is higher; the table shows the mean
over the seeds, and each seed's share of wins is printed too.

(b) Training time per chat per update: `bot.topics.learned.build` (vectors, fit, JSON) on the
votes of each topic and seed, 20 votes and then 60 (a reader who kept voting), and at the
most votes a model is fitted on (`FIT_VOTES`, a long-time reader), p50 and p95.

    python -m bench.bench_feedback [--seeds 5] [--votes-from labelled|delivered] [--strength C]

`--votes-from delivered` draws the votes from the papers the rule tags first (what a chat is
sent); the digest left is then nearly all positives, so it says little about the order.

The last line is the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import replace
from datetime import UTC, datetime

from bench.relevance_catalog import labelled_topics, load_split, rule_tagger
from bot.domain import Paper
from bot.topics import learned as learned_rules
from bot.topics.catalog import load_catalog
from bot.topics.learned import DOWN, UP, Vote, build, order

VOTES_EACH = 10
TOP = 5
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def rule_order(papers: list[Paper]) -> list[Paper]:
    """A digest section's order without a model: newest first, then by arXiv id, descending."""
    day = lambda p: p.announced.toordinal() if p.announced else 0  # noqa: E731
    return sorted(papers, key=lambda p: (day(p), p.arxiv_id), reverse=True)


def precision_at(papers: list[Paper], gold: dict[str, bool], k: int = TOP) -> float:
    top = papers[:k]
    return sum(gold[p.arxiv_id] for p in top) / len(top)


def votes_for(positives: list[Paper], negatives: list[Paper], slug: str) -> list[Vote]:
    """The reader's votes: the papers carry the followed topic's tag, as delivered ones do."""
    tagged = lambda p: replace(p, tags=(slug,))  # noqa: E731
    return [Vote(tagged(p), UP, NOW) for p in positives] + [
        Vote(tagged(p), DOWN, NOW) for p in negatives
    ]


#: Where the reader's votes come from: "labelled" (any labelled paper of the topic) or
#: "delivered" (the papers the rule tags first, as a chat is sent them; others only to make 10).
VOTES_FROM = "labelled"


def draw(rng: random.Random, ids: list[str], tagged: set[str]) -> list[str]:
    if VOTES_FROM == "labelled":
        return rng.sample(ids, VOTES_EACH)
    sent = [i for i in ids if i in tagged]
    rng.shuffle(sent)
    others = rng.sample([i for i in ids if i not in tagged], max(0, VOTES_EACH - len(sent)))
    return (sent + others)[:VOTES_EACH]


def one_topic(
    slug: str, gold: dict[str, bool], papers: dict[str, Paper], tagged: set[str], seed: int
):
    """(rule p@5, model p@5, training seconds) for one seed, or None when it cannot count."""
    rng = random.Random(f"{seed}:{slug}")
    ids = sorted(gold)
    positives = [i for i in ids if gold[i]]
    negatives = [i for i in ids if not gold[i]]
    if len(positives) < VOTES_EACH or len(negatives) < VOTES_EACH:
        return None
    up, down = draw(rng, positives, tagged), draw(rng, negatives, tagged)
    rest = [papers[i] for i in ids if i in tagged and i not in set(up) | set(down)]
    if len(rest) < TOP:
        return None
    votes = votes_for([papers[i] for i in up], [papers[i] for i in down], slug)
    start, cpu = time.perf_counter(), time.process_time()
    chat_model = build(votes, {slug}, NOW)
    seconds = (time.perf_counter() - start, time.process_time() - cpu)
    model = chat_model.linear()
    assert model is not None and chat_model.orders(slug)
    rule = precision_at(rule_order(rest), gold)
    learned = precision_at(order(rule_order(rest), model), gold)
    return rule, learned, seconds


def more_votes_seconds(slug: str, gold: dict[str, bool], papers: dict[str, Paper], seed: int):
    """Training time on up to 30 votes of each kind: a reader who kept voting."""
    rng = random.Random(f"more:{seed}:{slug}")
    ids = sorted(gold)
    positives = [papers[i] for i in ids if gold[i]]
    negatives = [papers[i] for i in ids if not gold[i]]
    votes = votes_for(
        rng.sample(positives, min(30, len(positives))),
        rng.sample(negatives, min(30, len(negatives))),
        slug,
    )
    start, cpu = time.perf_counter(), time.process_time()
    build(votes, {slug}, NOW)
    return (time.perf_counter() - start, time.process_time() - cpu), len(votes)


def full_window_seconds(papers: dict[str, Paper], rounds: int = 20) -> list[tuple[float, float]]:
    """Training time of a chat at the most votes a model is fitted on (`FIT_VOTES`): a
    long-time reader's votes, half 👍 and half 👎, on papers drawn from the whole split."""
    samples = []
    for seed in range(rounds):
        drawn = random.Random(f"full:{seed}").sample(sorted(papers), learned_rules.FIT_VOTES)
        half = len(drawn) // 2
        votes = votes_for(
            [papers[i] for i in drawn[:half]], [papers[i] for i in drawn[half:]], "topic"
        )
        start, cpu = time.perf_counter(), time.process_time()
        build(votes, {"topic"}, NOW)
        samples.append((time.perf_counter() - start, time.process_time() - cpu))
    return samples


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timing(samples: list[tuple[float, float]]) -> dict[str, float]:
    """p50 and p95 in ms of wall-clock and of this process's CPU time (the machine is shared:
    wall-clock includes waiting for a core)."""
    wall = [w * 1000 for w, _ in samples]
    cpu = [c * 1000 for _, c in samples]
    return {
        "p50": round(percentile(wall, 0.5), 1),
        "p95": round(percentile(wall, 0.95), 1),
        "cpu_p50": round(percentile(cpu, 0.5), 1),
        "cpu_p95": round(percentile(cpu, 0.95), 1),
        "n": len(samples),
    }


def run(seeds: int) -> dict[str, object]:
    catalog = load_catalog()
    topics, problems = labelled_topics("dev")
    papers = load_split("dev")
    tagger = rule_tagger(catalog, [t.slug for t in topics])
    rows, per_seed_wins, seconds, more_seconds = [], [[] for _ in range(seeds)], [], []
    first = list(papers.values())[:2]
    learned_rules.fit([(first[0], UP), (first[1], DOWN)])  # imports scikit-learn: not timed
    for topic in topics:
        gold = {lb.arxiv_id: lb.label for lb in topic.labels if lb.arxiv_id in papers}
        tagged = {i for i in gold if topic.slug in tagger.tag(papers[i])}
        results = [one_topic(topic.slug, gold, papers, tagged, s) for s in range(seeds)]
        if any(r is None for r in results):
            rows.append((topic.slug, None, None, "left out: too few labelled or tagged papers"))
            continue
        for s, (rule, learned, took) in enumerate(results):  # type: ignore[misc]
            per_seed_wins[s].append(learned > rule)
            seconds.append(took)
        more_seconds.append(more_votes_seconds(topic.slug, gold, papers, 0))
        rule = statistics.mean(r[0] for r in results)  # type: ignore[index]
        learned = statistics.mean(r[1] for r in results)  # type: ignore[index]
        verdict = "win" if learned > rule else "tie" if learned == rule else "loss"
        rows.append((topic.slug, rule, learned, verdict))
    counted = [r for r in rows if r[1] is not None]
    wins = sum(r[3] == "win" for r in counted)
    beatable = [r for r in counted if r[1] < 1.0]
    beaten = sum(r[3] == "win" for r in beatable)
    return {
        "topics_labelled": len(topics),
        "topics_counted": len(counted),
        "problems": problems,
        "seeds": seeds,
        "table": [
            {"topic": slug, "rule_p5": rule, "model_p5": learned, "verdict": verdict}
            for slug, rule, learned, verdict in rows
        ],
        "wins": wins,
        "ties": sum(r[3] == "tie" for r in counted),
        "losses": sum(r[3] == "loss" for r in counted),
        "win_share": round(wins / len(counted), 3) if counted else None,
        "win_share_per_seed": [round(sum(w) / len(w), 3) for w in per_seed_wins if w],
        "mean_rule_p5": round(statistics.mean(r[1] for r in counted), 3),
        "mean_model_p5": round(statistics.mean(r[2] for r in counted), 3),
        "beatable": len(beatable),
        "win_share_beatable": round(beaten / len(beatable), 3) if beatable else None,
        "train_ms_20_votes": timing(seconds),
        "train_ms_up_to_60_votes": {
            **timing([s for s, _ in more_seconds]),
            "votes_mean": round(statistics.mean(n for _, n in more_seconds), 1),
        },
        "train_ms_full_window": {
            **timing(full_window_seconds(papers)),
            "votes": learned_rules.FIT_VOTES,
        },
    }


def main() -> None:
    global VOTES_FROM
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="draws of the reader's votes")
    parser.add_argument("--votes-from", choices=("labelled", "delivered"), default=VOTES_FROM)
    parser.add_argument(
        "--strength", type=float, help=f"the fit's C (default {learned_rules.STRENGTH})"
    )
    args = parser.parse_args()
    VOTES_FROM = args.votes_from
    if args.strength is not None:
        learned_rules.STRENGTH = args.strength
    figures = run(args.seeds)
    print(f"{'topic':40} {'rule p@5':>9} {'model p@5':>10}  verdict")
    for row in figures["table"]:  # type: ignore[union-attr]
        rule, learned = row["rule_p5"], row["model_p5"]
        if rule is None:
            print(f"{row['topic']:40} {'-':>9} {'-':>10}  {row['verdict']}")
        else:
            print(f"{row['topic']:40} {rule:9.2f} {learned:10.2f}  {row['verdict']}")
    print(
        f"model wins {figures['wins']}/{figures['topics_counted']} topics "
        f"({figures['win_share']:.0%}; goal >= 80%), ties {figures['ties']}, "
        f"losses {figures['losses']}; per seed: {figures['win_share_per_seed']}"
    )
    print(
        f"where the rule's order leaves room (rule p@5 < 1): the model wins "
        f"{figures['win_share_beatable']:.0%} of {figures['beatable']} topics"
    )
    print(f"mean p@5: rule {figures['mean_rule_p5']}, model {figures['mean_model_p5']}")
    print(f"training per chat per update, 20 votes: {figures['train_ms_20_votes']} ms (goal < 50)")
    print(f"training with up to 60 votes: {figures['train_ms_up_to_60_votes']} ms")
    print(f"training at the window's {learned_rules.FIT_VOTES} votes: ", end="")
    print(f"{figures['train_ms_full_window']} ms (goal < 50)")
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
