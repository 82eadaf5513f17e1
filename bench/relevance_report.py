"""What bench/relevance.py prints: the figures as tables, and one topic's dev errors.

`topic_report` reads the dev split only: it never loads, let alone prints, a held-out
paper, so nobody tunes a rule on the held-out split by looking at it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bench.relevance_catalog import (
    ESTIMATED,
    dev_folds,
    errors,
    labelled_topics,
    load_split,
    rule_tagger,
)
from bench.relevance_catalog import evaluate as evaluate_topic
from bench.relevance_unlabelled import unlabelled_hits
from bot.topics.catalog import Catalog
from bot.topics.resolve import resolve_topic

STRATUM = {
    "rule": "R (rule then)",
    "focus": "F (focus of the screen)",
    "screen": "S (screen)",
    "control": "C (control)",
    "?": "?",
}


def line(label: str, s: Mapping) -> str:
    return (
        f"{label:<34} P={s['precision']:.3f} R={s['recall']:.3f} F1={s['f1']:.3f}"
        f"  (tp={s['tp']} fp={s['fp']} fn={s['fn']})"
    )


def print_flagship(figures: Mapping, holdout_file: Path | None) -> None:
    print(f"catalog: {figures['catalog_topics']} topics")
    print(
        f"development set: {figures['devset_size']} papers, "
        f"{figures['devset_positives']} labelled RL for LLM Agents"
    )
    print(line("RL for LLM Agents (catalog rule)", figures["flagship_dev"]))
    for cat, s in figures["baseline_dev"].items():
        print(line(f"baseline: follow {cat}", s))
    print(f"best category baseline: {figures['baseline_best_category']}")
    print(
        f"seed page: flagship recall {figures['seed_flagship_recall']:.3f} "
        f"on {figures['seed_papers']} papers"
    )
    print(line("seed page: other tags (micro)", figures["seed_other_tags"]))
    held_out = figures["holdout"]
    if held_out is None:
        why = f"no file at {holdout_file}" if holdout_file else "shown only with --holdout"
        print(f"held-out (not used for tuning): {why}")
        return
    flag = held_out["flagship"]
    print(
        f"held-out (not used for tuning): {held_out['size']} papers, "
        f"{held_out['positives']} labelled RL for LLM Agents"
    )
    print(line("held-out: RL for LLM Agents", flag))
    print(
        f"{'':<34} precision 95% CI {flag['precision_ci95']}, "
        f"recall 95% CI {flag['recall_ci95']}, "
        f"false-positive rate {flag['false_positive_rate']:.4f}"
    )
    for cat, s in held_out["baseline"].items():
        print(line(f"held-out: baseline follow {cat}", s))
    print(f"held-out: best category baseline: {held_out['baseline_best_category']}")


def _cells(f: Mapping | None) -> str:
    if f is None:
        return f"{'-':>5} {'-':>5} {'-':>5} {'':>9} {'':>8}"
    w, read = f["weighted"], f"{f['positives_read']:>3}+/{f['papers_read']:<4}"
    low, high = f["f1_ci95"]
    return f"{w['precision']:5.2f} {w['recall']:5.2f} {w['f1']:5.2f} {low:.2f}-{high:.2f} {read}"


def print_catalog(dev: Mapping, held: Mapping | None) -> None:
    """The table of every labelled topic: weighted P/R/F1, positives/papers read, the
    controls (positive / tagged of those read), unlabelled hits, and the plain F1."""
    print(f"\nlabelled catalog topics ({dev['papers']} dev papers; weighted over strata R+S)")
    slugs = sorted(set(dev["topics"]) | set(held["topics"] if held else ()))
    width = max(map(len, slugs), default=5)
    cells = f"{'P':>5} {'R':>5} {'F1':>5} {'F1 95%':>9} {'read':>8}"
    head = f"{'topic':<{width}} {cells}  ctl+/tag unlab plainF1"
    if held is not None:
        head += f" | held-out {cells}"
    print(head)
    for slug in slugs:
        f = dev["topics"].get(slug)
        row = f"{slug:<{width}} {_cells(f)}"
        if f is not None:
            c, unlabelled = f["controls"], f.get("unlabelled_hits", "-")
            unlabelled = "?" if unlabelled is None else unlabelled
            row += (
                f"  {c['positive']:>3}/{c['tagged']:<3} {unlabelled!s:>5} {f['plain']['f1']:7.2f}"
            )
        else:
            row += f"  {'':>23}"
        if held is not None:
            row += f" | {'':>8} {_cells(held['topics'].get(slug))}"
        print(row)
    for name, figures in (("dev", dev), ("held-out", held)):
        if figures is None:
            continue
        macro = figures["macro_f1"]
        shown = "n/a" if macro is None else f"{macro:.3f}"
        print(f"{name}: macro-F1 {shown} over {len(figures['topics'])} topics; worst five:")
        for slug in figures["worst_five"]:
            f = figures["topics"][slug]
            print(f"  {slug:<{width}} F1={f['weighted']['f1']:.3f} (95% {f['f1_ci95']})")
        for problem in figures["problems"]:
            print(f"  NOT COUNTED {problem}")


def print_tags(tags: Mapping) -> None:
    print()
    for name, f in tags.items():
        if not name.startswith("listing_"):
            continue
        print(
            f"{name}: {f['papers']} papers, tags per paper median {f['median_tags']}, "
            f"95th percentile {f['p95_tags']}, max {f['max_tags']}"
        )
        for slug, wide in f["over_15_percent"].items():
            kind = "top-level field" if wide["top_level"] else "NOT top-level"
            print(f"  on {wide['share']:.1%} of the listing: {slug} ({kind})")
    print(line("seed page: curated tags, +N counted", tags["seed_curated_tags"]))
    print(line("seed page: alert tag lines, +N counted", tags["seed_curated_tags"]["tag_line"]))


def _resolve(catalog: Catalog, text: str) -> str | None:
    topic = catalog.by_slug(text) or next(
        (t for t in catalog.topics if t.name.casefold() == text.casefold()), None
    )
    topic = topic or resolve_topic(text, catalog).topic
    return topic.slug if topic else None


def topic_report(catalog: Catalog, text: str, fold: str | None = None) -> int:
    """Print one topic's dev figures, false positives (with the matched words), false
    negatives and unlabelled hits. Dev only, always; with `fold`, the labels of that
    fold's days alone, and for the "check" fold the figures but no paper."""
    slug = _resolve(catalog, text)
    if slug is None:
        print(f"{text!r}: no catalog topic has that slug or name")
        return 2
    found, problems = labelled_topics("dev", fold=fold)
    topic = next((t for t in found if t.slug == slug), None)
    if topic is None:
        labelled = ", ".join(t.slug for t in found) or "none yet"
        why = next((p for p in problems if p.startswith(f"{slug} ")), "it has no dev labels")
        print(f"{text!r}: no usable dev labels ({why}). Labelled topics: {labelled}")
        return 2
    papers = load_split("dev")
    tagger = rule_tagger(catalog, [slug])
    tags = {lb.arxiv_id: tagger.tag(papers[lb.arxiv_id]) for lb in topic.labels}
    figures = evaluate_topic(topic, {i: slug in t for i, t in tags.items()})
    days = f", {fold} days" if fold else ""
    print(f"{catalog.by_slug(slug).name} ({slug}) on dev{days}, labelled {figures['papers_read']}")
    print(line("weighted over R+S", figures["weighted"]))
    print(line("plain, all labelled", figures["plain"]))
    if fold == "check":
        print("(check days: figures only, so that they stay a test of what was tuned elsewhere)")
        return 0
    wrong = errors(topic, tags)
    for kind, title in (("false_positives", "false positives"), ("false_negatives", "misses")):
        print(f"\n{title} ({len(wrong[kind])}):")
        for label, why in wrong[kind]:
            paper = papers[label.arxiv_id]
            stratum = topic.pool.stratum_of(label.arxiv_id) or "?"
            weight = topic.pool.strata[stratum].weight if stratum in ESTIMATED else 0.0
            matched = f"  [matched: {', '.join(why)}]" if why else ""
            print(f"  {label.arxiv_id} {paper.title[:90]}")
            print(f"      {STRATUM[stratum]}, weight {weight:.1f}; note: {label.note}{matched}")
    hits = unlabelled_hits([topic], papers, catalog, tagger)[slug]
    ids = hits["ids"]
    if fold is not None:  # only the fold's days: a tune run names no check-day paper
        folds = dev_folds()
        ids = [arxiv_id for arxiv_id in ids if folds.get(arxiv_id) == fold]
    count = hits["count"] if hits["count"] is None else len(ids)
    print(f"\nunlabelled hits in stratum C{days} (read them): {count} ({hits['reason']})")
    for arxiv_id in ids:
        print(f"  {arxiv_id} {papers[arxiv_id].title[:90]}")
    return 0


def goals(flagship: Mapping, dev: Mapping, held: Mapping | None, tags: Mapping) -> list[dict]:
    """The goals of issue 15, each with its measured value and whether it is met. The
    catalog goals are judged on held-out figures; on dev they are shown for tuning."""
    out = []

    def goal(name: str, value: object, ok: bool) -> None:
        out.append({"goal": name, "value": value, "met": bool(ok)})

    for split, figures in (("dev", dev), ("held-out", held)):
        if figures is None:
            continue
        topics = {s: f for s, f in figures["topics"].items() if f["positives_read"]}
        macro = figures["macro_f1"] or 0.0
        goal(f"{split}: macro-F1 >= 0.85", macro, macro >= 0.85)
        if topics:
            low = min(topics, key=lambda s: topics[s]["weighted"]["f1"])
            value = f"{low} {topics[low]['weighted']['f1']}"
            goal(f"{split}: no topic below F1 0.70", value, topics[low]["weighted"]["f1"] >= 0.7)
        flag = figures["topics"].get("rl-for-llm-agents")
        if flag is not None:
            w = flag["weighted"]
            value = f"P {w['precision']} R {w['recall']}, {flag['positives_read']} positives"
            met = w["precision"] >= 0.85 and w["recall"] >= 0.9 and flag["positives_read"] >= 30
            goal(f"{split}: RL for LLM Agents P >= 0.85, R >= 0.90, >= 30 positives", value, met)
    recall = flagship["seed_flagship_recall"]
    goal("seed page: RL for LLM Agents recall 30/30", recall, recall == 1.0)
    f1 = tags["seed_curated_tags"]["f1"]
    goal("seed page: other curated tags F1 >= 0.75 (+N counted)", f1, f1 >= 0.75)
    for name, f in tags.items():
        if name.startswith("listing_"):
            goal(f"{name}: median tags per paper <= 5", f["median_tags"], f["median_tags"] <= 5)
            wide = f["over_15_percent_not_top_level"]
            goal(f"{name}: no non-field topic on > 15%", wide or "none", not wide)
    return out


def print_goals(results: list[dict]) -> None:
    print("\ngoals (issue 15; the catalog ones count on held-out):")
    for r in results:
        print(f"  [{'met' if r['met'] else 'NOT MET':>7}] {r['goal']}: {r['value']}")
