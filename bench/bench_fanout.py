"""Outbox fan-out of one day's new papers to 100,000 chats, on SQLite and PostgreSQL.

    .venv/bin/python -m bench.bench_fanout [--backend both|sqlite|postgres] [--explain]
        [--cap SECONDS] [--chats 100000] [--subs-per-chat 3] [--papers 2000]
        [--old-papers 20000] [--seed 7]

Builds a database of N chats (default 100,000; 55% instant, 40% daily, 2% weekly, 3% off,
3% inactive) following 3 catalog topics each (Zipf-like popularity, s=1.0: a handful of
topics have most followers), 5% of chats muting one popular tag (half of them for one
subscription only), and `--old-papers` earlier papers plus `--papers` new ones (default
2,000) carrying ~3 tags each (Zipf-like, s=0.8, ranked independently of follower counts).
Setup uses bulk inserts and is not measured (bench/fanout_data.py). Then it times exactly
what `bot.services.ingest.store` does for new papers: `uow.outbox.enqueue_papers(paper_ids, now)` in
one transaction plus the commit. That writes one row per chat for the batch; which papers
each chat is owed (after mutes) is worked out when a worker first claims its row, so the
benchmark then claims 2,000 rows the way a worker does (nothing is sent) and times that too
(bench/fanout_measure.py).

Each backend runs in a fresh subprocess (`--backend sqlite|postgres`; the default `both`
runs the two one after the other), and the setup runs in a process of its own, so the
peak RSS reported (`ru_maxrss`) is that of the measured phase (plus the imports). The
rows written are checked against an independent, hand-written SQL count, and the
papers the claimed rows resolve to against a hand-written (chat, paper) query. Goals: <= 30 s
on SQLite, <= 15 s on PostgreSQL, peak RSS <= 300 MB. A run is cancelled (and rolled
back) at twice its goal so that the script ends in about 2.5 minutes whatever happens;
`--cap 0` waits it out. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict
from typing import Any

from bench.fanout_data import Shape
from bench.fanout_measure import measure
from bench.harness import fresh_database, last_json_line, run_module, verdict

GOALS_S = {"sqlite": 30.0, "postgres": 15.0}
GOAL_RSS_MB = 300.0


async def run_backend(backend: str, shape: Shape, explain: bool, cap: float) -> dict[str, Any]:
    """This process measures; a child process builds the database first."""
    async with fresh_database(backend, "pw_fanout", migrate=False) as url:
        setup = ("bench.fanout_data", f"--url={url}", *shape.arguments())
        await asyncio.to_thread(run_module, *setup)
        return await measure(backend, url, shape, explain, cap)


def report(f: dict[str, Any]) -> None:
    goal = GOALS_S[f["backend"]]
    met = verdict(f["total_s"] <= goal and not f["cancelled_at_cap"])
    rss = verdict(f["peak_rss_mb"] <= GOAL_RSS_MB)
    check = "matches" if f["count_ok"] else "DOES NOT MATCH"
    if f["cancelled_at_cap"]:
        check = "what the cancelled run would have written"
    print(
        f"  outbox rows written:  {f['rows']:,} ({f['alerts']:,} alert rows,"
        f" {f['items']:,} digest item rows), one per chat for the batch"
    )
    print(f"  independent SQL count: {f['expected_rows']:,} ({check})")
    print(
        f"  owed (chat, paper):   {f['chat_paper_pairs']:,}, resolved when a row is first claimed"
    )
    if f["cancelled_at_cap"]:
        print(
            f"  enqueue + commit:     > {f['enqueue_s']:.0f} s: cancelled at the cap and rolled"
            f" back (--cap 0 to wait it out), goal <= {goal:.0f} s: MISSED"
        )
    else:
        print(
            f"  enqueue + commit:     {f['total_s']:.2f} s (insert {f['enqueue_s']:.2f} s,"
            f" commit {f['commit_s']:.2f} s), goal <= {goal:.0f} s: {met}"
        )
    print(
        f"  peak RSS:             {f['peak_rss_mb']:.0f} MB (before the enqueue"
        f" {f['rss_before_mb']:.0f} MB), goal <= {GOAL_RSS_MB:.0f} MB: {rss}"
    )
    if "sample_rows" in f:
        same = "match PAIRS_SQL" if f["sample_ok"] else "DO NOT MATCH PAIRS_SQL"
        print(
            f"  first claim:          {f['sample_rows']:,} rows resolved to"
            f" {f['sample_pairs']:,} (chat, paper) pairs that {same};"
            f" {f['claim_ms_per_row']:.3f} ms a row"
        )
    for line in f["plan"]:
        print(f"    | {line if len(line) <= 160 else line[:157] + '...'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", choices=("both", "sqlite", "postgres"), default="both")
    Shape.add_arguments(parser)
    parser.add_argument("--explain", action="store_true", help="print the INSERT's query plan")
    parser.add_argument(
        "--cap",
        type=float,
        help="cancel a run after this many seconds (default: twice the goal; 0: never)",
    )
    args = parser.parse_args()
    shape = Shape.from_arguments(args)
    if args.backend != "both":
        print(f"{args.backend}:", flush=True)
        cap = 2 * GOALS_S[args.backend] if args.cap is None else args.cap
        figures = asyncio.run(run_backend(args.backend, shape, args.explain, cap))
        report(figures)
        print(json.dumps({k: v for k, v in figures.items() if k != "plan"}), flush=True)
        return
    options = [*shape.arguments(), *["--explain"] * args.explain]
    if args.cap is not None:
        options.append(f"--cap={args.cap}")
    results: dict[str, Any] = {"shape": asdict(shape)}
    for backend in ("sqlite", "postgres"):  # each in a fresh process, for its peak RSS
        output = run_module("bench.bench_fanout", f"--backend={backend}", *options, capture=True)
        printed, results[backend] = last_json_line(output)
        print("\n".join(printed), flush=True)
    ok = all(
        results[b]["count_ok"]
        and results[b].get("sample_ok", False)
        and not results[b]["cancelled_at_cap"]
        and results[b]["total_s"] <= GOALS_S[b]
        and results[b]["peak_rss_mb"] <= GOAL_RSS_MB
        for b in ("sqlite", "postgres")
    )
    results["goals_met"] = ok
    print(f"all goals met: {'yes' if ok else 'NO'}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
